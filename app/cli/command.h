// cairn-cli subcommands: each is `int run<Name>(Args&)`, registered in main.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cairn::cli {

// Minimal argument reader: flags (`--json`), options (`-m FILE`, `--temp 0.7`) and positionals.
class Args {
public:
    Args(std::vector<std::string> argv) : args_(std::move(argv)) {}
    bool flag(const std::string& name);  // consumes it
    std::optional<std::string> option(const std::string& shortName, const std::string& longName = {});
    std::string require(const std::string& shortName, const std::string& longName = {});
    double number(const std::string& shortName, const std::string& longName, double fallback);
    std::vector<std::string> positionals();  // what is left; errors on unknown -x
private:
    std::vector<std::string> args_;
};

int runInspect(Args& args);
int runTemplate(Args& args);
int runTokenize(Args& args);
int runBenchKernels(Args& args);
int runDump(Args& args);
int runGenerate(Args& args);
int runBench(Args& args);
int runSynth(Args& args);
int runChatBench(Args& args);
int runServe(Args& args);
int runChat(Args& args);
int runDownload(Args& args);
int runSearchHub(Args& args);

}  // namespace cairn::cli
