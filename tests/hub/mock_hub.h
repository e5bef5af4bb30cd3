// A loopback stand-in for the Hugging Face hub (httplib on its own thread):
// /api/models (search), /api/models/{repo}/tree/main and
// /{repo}/resolve/main/{path}, which redirects to /cdn/... on "localhost" (another
// host than the hub's 127.0.0.1, as the real hub redirects to its storage).
// The JSON has the shapes the real API answers with (recorded field names);
// each file can drop its connection once, ignore Range, want a token or
// list a wrong checksum. Requests are logged for the tests to assert on.
#pragma once

#include "background_listen.h"

#include <httplib.h>

#include <QByteArray>
#include <QCryptographicHash>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cairn::test {

struct MockFile {
    MockFile(std::string p, std::string c) : path(std::move(p)), content(std::move(c)) {}
    std::string path;  // in the repository
    std::string content;
    std::string listedSha;  // empty: the real SHA-256 of content
    long dropAfter = -1;  // once: close the connection after this many bytes of the file
    bool ignoreRange = false;  // answer 200 with the whole file to a Range request
    int delayMsPerChunk = 0;  // slow transfers (pause tests)
    bool missing = false;  // listed, but the download is a 404
};

struct MockRepo {
    std::string id;
    long downloads = 0, likes = 0;
    std::string token;  // non-empty: downloads need "Authorization: Bearer <token>" (401 without, 403 wrong)
    std::vector<MockFile> files;
};

struct LoggedRequest {
    std::string path, range, authorization, host;
};

inline std::string sha256Hex(const std::string& bytes) {
    return QCryptographicHash::hash(QByteArray::fromStdString(bytes), QCryptographicHash::Sha256).toHex().toStdString();
}

inline std::string sha1Hex(const std::string& bytes) {
    return QCryptographicHash::hash(QByteArray::fromStdString(bytes), QCryptographicHash::Sha1).toHex().toStdString();
}

// Deterministic filler bytes.
inline std::string fillerBytes(size_t n, uint32_t seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        s[i] = char(seed >> 24);
    }
    return s;
}

class MockHub {
public:
    std::vector<MockRepo> repos;
    std::string searchOverride;  // non-empty: the /api/models body as is
    std::string treeOverride;  // non-empty: every tree body as is

    void start() {
        http_.Get("/api/models", [this](const httplib::Request& req, httplib::Response& res) { search(req, res); });
        http_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/main)",
                  [this](const httplib::Request& req, httplib::Response& res) { tree(req, res); });
        http_.Get(R"(/([^/]+)/([^/]+)/resolve/main/(.+))",
                  [this](const httplib::Request& req, httplib::Response& res) { resolve(req, res); });
        http_.Get(R"(/cdn/(\d+)/(\d+))",
                  [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); });
        port_ = http_.bind_to_any_port("127.0.0.1");
        thread_ = listenInBackground(http_);
    }
    ~MockHub() {
        stopping_ = true;
        http_.stop();
        if (thread_.joinable()) thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int port() const { return port_; }

    std::vector<LoggedRequest> log() {
        std::lock_guard<std::mutex> lock(mutex_);
        return log_;
    }
    void clearLog() {
        std::lock_guard<std::mutex> lock(mutex_);
        log_.clear();
    }
    std::string lastSearchQuery() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lastSearch_;
    }

private:
    void note(const httplib::Request& req) {
        std::lock_guard<std::mutex> lock(mutex_);
        log_.push_back({req.path, req.get_header_value("Range"), req.get_header_value("Authorization"),
                        req.get_header_value("Host")});
    }

    MockRepo* findRepo(const std::string& id) {
        for (auto& r : repos)
            if (r.id == id) return &r;
        return nullptr;
    }

    // The shape of GET /api/models?search=...&filter=gguf.
    void search(const httplib::Request& req, httplib::Response& res) {
        note(req);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            lastSearch_ = "search=" + req.get_param_value("search") + "&filter=" + req.get_param_value("filter") +
                "&sort=" + req.get_param_value("sort") + "&direction=" + req.get_param_value("direction");
        }
        if (!searchOverride.empty()) return res.set_content(searchOverride, "application/json");
        std::string body = "[";
        for (size_t i = 0; i < repos.size(); ++i) {
            const auto& r = repos[i];
            body += std::string(i ? "," : "") + "{\"_id\":\"65f0c0ffee" + std::to_string(i) + "\",\"id\":\"" + r.id +
                "\",\"likes\":" + std::to_string(r.likes) +
                ",\"trendingScore\":3,\"private\":false,\"downloads\":" + std::to_string(r.downloads) +
                ",\"tags\":[\"gguf\",\"text-generation\"],\"pipeline_tag\":\"text-generation\"," +
                "\"library_name\":\"gguf\",\"createdAt\":\"2024-09-17T14:12:05.000Z\",\"modelId\":\"" + r.id + "\"" +
                (req.has_param("expand[]")
                     ? ",\"lastModified\":\"2025-03-0" + std::to_string(1 + i % 9) + "T10:00:00.000Z\""
                     : "") +
                (r.token.empty() ? "" : ",\"gated\":\"manual\"") + "}";
        }
        res.set_content(body + "]", "application/json");
    }

    // The shape of GET /api/models/{repo}/tree/main: files with their git oid and,
    // for LFS files, lfs.oid (the SHA-256) and size; directories; small non-LFS files.
    void tree(const httplib::Request& req, httplib::Response& res) {
        note(req);
        if (!treeOverride.empty()) return res.set_content(treeOverride, "application/json");
        MockRepo* repo = findRepo(req.matches[1].str() + "/" + req.matches[2].str());
        if (!repo) {
            res.status = 404;
            return res.set_content("{\"error\":\"Repository not found\"}", "application/json");
        }
        std::string body = "[{\"type\":\"file\",\"oid\":\"" + sha1Hex("*.gguf filter=lfs") +
            "\",\"size\":1519,\"path\":\".gitattributes\"},"
            "{\"type\":\"directory\",\"oid\":\"6c3f1e2a5b\",\"size\":0,\"path\":\"extra\"}";
        for (const auto& f : repo->files) {
            const std::string sha = f.listedSha.empty() ? sha256Hex(f.content) : f.listedSha;
            body += ",{\"type\":\"file\",\"oid\":\"" + sha1Hex(f.path) +
                "\",\"size\":" + std::to_string(f.content.size()) + ",\"lfs\":{\"oid\":\"" + sha +
                "\",\"size\":" + std::to_string(f.content.size()) + ",\"pointerSize\":135},\"xetHash\":\"" +
                sha256Hex(sha) + "\",\"path\":\"" + f.path + "\"}";
        }
        res.set_content(body + ",{\"type\":\"file\",\"oid\":\"abc\",\"size\":5174,\"path\":\"README.md\"}]",
                        "application/json");
    }

    void resolve(const httplib::Request& req, httplib::Response& res) {
        note(req);
        const std::string repoId = req.matches[1].str() + "/" + req.matches[2].str();
        MockRepo* repo = findRepo(repoId);
        const std::string path = httplib::detail::decode_url(req.matches[3].str(), false);
        if (repo && !repo->token.empty()) {
            const std::string auth = req.get_header_value("Authorization");
            if (auth.empty()) {
                res.status = 401;
                return res.set_content("{\"error\":\"Access to model " + repoId + " is restricted.\"}",
                                       "application/json");
            }
            if (auth != "Bearer " + repo->token) {
                res.status = 403;
                return res.set_content("{\"error\":\"Access to model " + repoId + " is restricted.\"}",
                                       "application/json");
            }
        }
        for (size_t r = 0; repo && r < repos.size(); ++r)
            if (&repos[r] == repo)
                for (size_t i = 0; i < repo->files.size(); ++i)
                    if (repo->files[i].path == path && !repo->files[i].missing) {
                        res.status = 302;
                        res.set_header("Location",
                                       "http://localhost:" + std::to_string(port_) + "/cdn/" + std::to_string(r) + "/" +
                                           std::to_string(i));
                        return;
                    }
        res.status = 404;
        res.set_content("{\"error\":\"Entry not found\"}", "application/json");
    }

    void serve(const httplib::Request& req, httplib::Response& res) {
        note(req);
        const size_t r = std::stoul(req.matches[1].str()), i = std::stoul(req.matches[2].str());
        if (r >= repos.size() || i >= repos[r].files.size()) {
            res.status = 404;
            return;
        }
        MockFile& f = repos[r].files[i];
        const long drop = f.dropAfter;
        f.dropAfter = -1;
        const std::string* content = &f.content;
        const int delay = f.delayMsPerChunk;
        if (f.ignoreRange) {  // a 200 with the whole body, chunked (httplib applies no Range to those)
            res.status = 200;
            res.set_chunked_content_provider(
                "application/octet-stream", [content](size_t offset, httplib::DataSink& sink) {
                    if (offset >= content->size()) {
                        sink.done();
                        return true;
                    }
                    return sink.write(content->data() + offset, std::min<size_t>(content->size() - offset, 64 * 1024));
                });
            return;
        }
        res.set_content_provider(content->size(), "application/octet-stream",
                                 [this, content, drop, delay](size_t offset, size_t length, httplib::DataSink& sink) {
                                     const size_t n = std::min<size_t>(length, 64 * 1024);
                                     if (drop >= 0 && offset + n > size_t(drop)) {
                                         if (offset < size_t(drop))
                                             sink.write(content->data() + offset, size_t(drop) - offset);
                                         return false;  // the connection drops here
                                     }
                                     if (delay > 0 && !stopping_)
                                         std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                                     return sink.write(content->data() + offset, n);
                                 });
    }

    httplib::Server http_;
    std::thread thread_;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::vector<LoggedRequest> log_;
    std::string lastSearch_;
};

}  // namespace cairn::test
