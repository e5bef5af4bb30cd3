// What the hub's API answers, parsed: repositories of a search and the GGUF
// files of a repository. Every reply is untrusted: bounded, malformed JSON is a
// cairn::Error naming the reply, entries of the wrong shape are skipped, and a
// file name that could leave the models folder is never used.
#pragma once

#include <QByteArray>
#include <QString>
#include <QUrl>

#include <optional>
#include <vector>

namespace cairn::hub {

// The largest API reply read (a search of 100 repositories is ~50 KiB; a
// repository tree of 1,000 files ~300 KiB).
constexpr qint64 kMaxApiReplyBytes = qint64(8) << 20;
// More entries than this in one reply are ignored.
constexpr size_t kMaxEntries = 5000;

enum class SearchSort { Downloads, Likes, Updated };

struct HubRepo {
    QString id;  // "owner/name"
    qint64 downloads = 0;
    qint64 likes = 0;
    QString lastModified;  // ISO 8601 as the hub gives it; may be empty
    bool gated = false;
};

struct HubFile {
    QString path;  // inside the repository ("Q8_0/x-00001-of-00002.gguf")
    QString localName;  // the name it gets in the models folder (the path's last part)
    qint64 size = 0;
    QString sha256;  // the LFS oid, 64 lowercase hex digits; empty when the hub gave none
    QString quantization;  // "Q4_K_M", from the name; "" when none is recognised
    int splitIndex = 0;  // 1-based part of a split set; 0 for a single file
    int splitCount = 0;
};

// GET {base}/api/models?search=...&filter=gguf&expand[]=...: a JSON array of model objects.
std::vector<HubRepo> parseSearchReply(const QByteArray& body);
// GET {base}/api/models/{repo}/tree/main?recursive=true: a JSON array of
// {type, path, size, oid, lfs: {oid, size}}; only *.gguf files are kept.
std::vector<HubFile> parseTreeReply(const QByteArray& body);

// A repository id the URLs may carry: "owner/name" of [A-Za-z0-9._-], no "..".
bool isValidRepoId(const QString& repo);
// The file's name in the models folder, or nullopt when the path's last part
// is not a plain *.gguf name (empty, "..", hidden, controls, backslashes, too long).
std::optional<QString> safeLocalName(const QString& repoPath);
// "Q4_K_M", "IQ2_XS", "F16", "BF16", ... from a file name; "" when none.
QString quantizationOf(const QString& fileName);
// The parts of the split set `file` belongs to (itself alone when not split),
// sorted; throws cairn::Error when a part is missing from `files`.
std::vector<HubFile> splitSet(const std::vector<HubFile>& files, const HubFile& file);

// Base URL without a trailing slash; throws cairn::Error unless http(s)://host.
QString normalizeHubUrl(const QString& url);
QUrl searchUrl(const QString& base, const QString& query, SearchSort sort, int limit);
QUrl treeUrl(const QString& base, const QString& repo);
QUrl fileUrl(const QString& base, const QString& repo, const QString& path);

}  // namespace cairn::hub
