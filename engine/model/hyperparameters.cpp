#include "model/hyperparameters.h"

#include "cairn/error.h"

#include <cmath>
#include <cstdio>

namespace cairn::model {
namespace {

std::string number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

[[noreturn]] void reject(const std::string& key, const std::string& value, const std::string& expected) {
    throw Error("model", "metadata key " + key + " is " + value + "; expected " + expected);
}

double readNumber(const gguf::File& f, const std::string& key, double fallback) {
    const gguf::Value* v = f.find(key);
    if (!v) return fallback;
    if (!v->isNumber()) throw Error("model", "metadata key " + key + " must be a number");
    return v->asFloat();
}

} // namespace

double floatAbove(const gguf::File& f, const std::string& key, double fallback, double above) {
    const double v = readNumber(f, key, fallback);
    if (!std::isfinite(v) || !(v > above)) reject(key, number(v), "a finite number above " + number(above));
    return v;
}

double finiteFloat(const gguf::File& f, const std::string& key, double fallback) {
    const double v = readNumber(f, key, fallback);
    if (!std::isfinite(v)) reject(key, number(v), "a finite number");
    return v;
}

float normEpsilon(const gguf::File& f, const std::string& key, double fallback) {
    const double v = readNumber(f, key, fallback);
    const float e = float(v);
    if (!std::isfinite(v) || !std::isfinite(e) || !(e > 0)) reject(key, number(v), "a finite float above 0");
    return e;
}

int64_t intInRange(const gguf::File& f, const std::string& key, int64_t min, int64_t max) {
    const gguf::Value* v = f.find(key);
    if (!v) throw Error("model", "missing metadata key " + key);
    return intInRange(f, key, 0, min, max);
}

int64_t intInRange(const gguf::File& f, const std::string& key, int64_t fallback, int64_t min, int64_t max) {
    const gguf::Value* v = f.find(key);
    if (v && !v->isInteger()) throw Error("model", "metadata key " + key + " must be one integer");
    const int64_t value = v ? v->asInt() : fallback;
    if (value < min || value > max)
        reject(key, std::to_string(value), "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return value;
}

void requirePositiveFinite(std::span<const float> values, const std::string& tensor) {
    for (size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]) || !(values[i] > 0))
            throw Error("model", "tensor " + tensor + " value " + std::to_string(i) + " is " + number(values[i]) +
                                     "; expected a finite number above 0");
}

} // namespace cairn::model
