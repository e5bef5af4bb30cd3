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

}  // namespace

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
            throw Error("model",
                        "tensor " + tensor + " value " + std::to_string(i) + " is " + number(values[i]) +
                            "; expected a finite number above 0");
}

void readRopeScaling(const gguf::File& f, const std::string& a, int64_t trainedContext, RopeConfig& r) {
    std::string type(f.getString(a + "rope.scaling.type", "none"));
    // 0 stands for "not set", as in llama.cpp; older files have rope.scale_linear instead.
    r.factor = floatAbove(f, a + "rope.scaling.factor", 0.0, -1.0);
    if (r.factor < 0) throw Error("model", "metadata key " + a + "rope.scaling.factor is negative");
    if (r.factor == 0.0) {
        double linear = floatAbove(f, a + "rope.scale_linear", 0.0, -1.0);
        if (linear < 0) throw Error("model", "metadata key " + a + "rope.scale_linear is negative");
        if (linear != 0.0 && type == "none") type = "linear";
        r.factor = linear != 0.0 ? linear : 1.0;
    }
    if (type == "none" || r.factor == 1.0) {
        r.scaling = RopeScaling::None;
        r.factor = 1.0;
    } else if (type == "linear") {
        r.scaling = RopeScaling::Linear;
    } else if (type == "yarn") {
        r.scaling = RopeScaling::Yarn;
        r.originalContext = intInRange(f, a + "rope.scaling.original_context_length", trainedContext, 1, kMaxContext);
        // A negative ext_factor means "the default", as in llama.cpp.
        r.extFactor = finiteFloat(f, a + "rope.scaling.yarn_ext_factor", 1.0);
        if (r.extFactor < 0) r.extFactor = 1.0;
        r.attnFactor = floatAbove(f, a + "rope.scaling.attn_factor", 1.0, 0.0);
        r.betaFast = floatAbove(f, a + "rope.scaling.yarn_beta_fast", 32.0, 0.0);
        r.betaSlow = floatAbove(f, a + "rope.scaling.yarn_beta_slow", 1.0, 0.0);
    } else {
        throw Error("model", "unsupported rope scaling type '" + type + "'");
    }
}

}  // namespace cairn::model
