// Interpreter cases with the output Python's jinja2 gives (jinja_cases.cpp, generated).
#pragma once

#include <cstddef>

struct RenderCase {
    const char* name;
    const char* source;
    const char* variables;  // JSON object
    const char* expected;
};
struct ErrorCase {
    const char* name;
    const char* source;
};

extern const RenderCase kRenderCases[];
extern const size_t kRenderCaseCount;
extern const ErrorCase kRuntimeErrors[];
extern const size_t kRuntimeErrorCount;
extern const ErrorCase kParseErrors[];
extern const size_t kParseErrorCount;
