// cairn-cli search-hub [--hub URL] [--sort downloads|likes|updated] [--limit N] QUERY [--json]
// Repositories with GGUF files matching QUERY, each with its GGUF files
// (quantization, size, split set), through the app's hub client (app/hub).
// HF_TOKEN, when set, is sent as the access token.
#include "command.h"
#include "hub_command.h"
#include "terminal_text.h"

#include "cairn/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace cairn::cli {

int runSearchHub(Args& args) {
    const QString hubUrl = hubUrlOption(args);
    const std::string sortName = args.option("--sort").value_or("downloads");
    const int limit = int(args.number("--limit", "--limit", 10));
    const bool asJson = args.flag("--json");
    const auto rest = args.positionals();
    if (rest.size() != 1)
        throw Error("search-hub", "usage: cairn-cli search-hub [--hub URL] [--sort S] [--limit N] QUERY [--json]");
    hub::SearchSort sort = hub::SearchSort::Downloads;
    if (sortName == "likes") sort = hub::SearchSort::Likes;
    else if (sortName == "updated") sort = hub::SearchSort::Updated;
    else if (sortName != "downloads")
        throw Error("search-hub", "--sort is downloads, likes or updated, not '" + sortName + "'");
    if (limit < 1 || limit > 100) throw Error("search-hub", "--limit is 1 to 100");

    HubCommand command(hubUrl);
    QString error;
    std::vector<hub::HubRepo> repos;
    command.client().search(QString::fromStdString(rest[0]), sort, limit,
                            [&](std::vector<hub::HubRepo> found, QString e) {
                                repos = std::move(found);
                                error = e;
                                command.done();
                            });
    command.wait();
    if (!error.isEmpty()) throw Error("", error.toStdString());

    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : repos) {
        std::vector<hub::HubFile> files;
        QString filesError;
        command.client().listFiles(r.id, [&](std::vector<hub::HubFile> f, QString e) {
            files = std::move(f);
            filesError = e;
            command.done();
        });
        command.wait();
        nlohmann::json j = {{"id", r.id.toStdString()}, {"downloads", r.downloads},
                            {"likes", r.likes},         {"lastModified", r.lastModified.toStdString()},
                            {"gated", r.gated},         {"files", nlohmann::json::array()}};
        if (!filesError.isEmpty()) j["error"] = filesError.toStdString();
        for (const auto& f : files) {
            nlohmann::json fj = {{"path", f.path.toStdString()},
                                 {"size", f.size},
                                 {"sha256", f.sha256.toStdString()},
                                 {"quantization", f.quantization.toStdString()}};
            if (f.splitCount) fj["split"] = {f.splitIndex, f.splitCount};
            j["files"].push_back(fj);
        }
        if (asJson) {
            out.push_back(j);
            continue;
        }
        std::printf("%s  (downloads %lld, likes %lld%s)\n", terminalSafe(r.id.toStdString()).c_str(),
                    (long long)r.downloads, (long long)r.likes, r.gated ? ", gated" : "");
        if (!filesError.isEmpty()) std::printf("    %s\n", terminalSafe(filesError.toStdString()).c_str());
        for (const auto& f : files)
            std::printf("    %-8s %10s  %s\n", terminalSafe(f.quantization.toStdString()).c_str(),
                        sizeText(f.size).toStdString().c_str(), terminalSafe(f.path.toStdString()).c_str());
    }
    if (asJson) std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
}

}  // namespace cairn::cli
