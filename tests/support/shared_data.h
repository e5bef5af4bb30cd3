// Access to ../shared (fixtures, references, vocabularies, templates) for conformance tests.
#pragma once

#include <QTest>

#include <cstdio>
#include <string>

namespace cairn::test {

// The shared folder (CAIRN_SHARED_DIR at configure time, overridable by the
// environment variable of the same name), or "" when it is missing.
std::string sharedDir();
std::string sharedPath(const std::string& relative);  // sharedDir() + "/" + relative
std::string readFile(const std::string& path);  // whole file, throws on error

}  // namespace cairn::test

// main() for a conformance test: without the shared folder it says why and
// exits 77, which CTest reports as "skipped".
#define CAIRN_CONFORMANCE_MAIN(TestClass)                                                                              \
    int main(int argc, char** argv) {                                                                                  \
        if (cairn::test::sharedDir().empty()) {                                                                        \
            std::printf("SKIPPED: shared data folder not found (set -DCAIRN_SHARED_DIR=...)\n");                       \
            return 77;                                                                                                 \
        }                                                                                                              \
        TestClass tc;                                                                                                  \
        return QTest::qExec(&tc, argc, argv);                                                                          \
    }
