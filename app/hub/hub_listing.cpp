#include "hub_listing.h"

#include "cairn/error.h"

#include <nlohmann/json.hpp>

#include <QRegularExpression>
#include <QUrlQuery>

#include <algorithm>
#include <map>

namespace cairn::hub {
namespace {

using nlohmann::json;

json parseArray(const QByteArray& body, const char* what) {
    if (body.size() > kMaxApiReplyBytes) throw Error(what, "the hub's reply is larger than 8 MiB");
    json j = json::parse(body.constData(), body.constData() + body.size(), nullptr, false);
    if (j.is_discarded()) throw Error(what, "the hub's reply is not valid JSON");
    if (!j.is_array()) throw Error(what, "the hub's reply is not a JSON array");
    return j;
}

QString stringField(const json& o, const char* key) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string()) return {};
    const auto& s = it->get_ref<const std::string&>();
    return QString::fromUtf8(s.data(), qsizetype(std::min<size_t>(s.size(), 1000)));
}

// A count or size: a non-negative integer below 2^53, else `fallback`.
qint64 countField(const json& o, const char* key, qint64 fallback = 0) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number_integer()) return fallback;
    if (it->is_number_unsigned()) {
        const auto v = it->get<uint64_t>();
        return v < (uint64_t(1) << 53) ? qint64(v) : fallback;
    }
    const auto v = it->get<int64_t>();
    return v >= 0 && v < (int64_t(1) << 53) ? qint64(v) : fallback;
}

bool isSha256(const QString& s) {
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{64}$"));
    return hex.match(s).hasMatch();
}

const QRegularExpression& splitPattern() {
    static const QRegularExpression re(QStringLiteral("^(.*)-(\\d{5})-of-(\\d{5})\\.gguf$"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re;
}

}  // namespace

std::vector<HubRepo> parseSearchReply(const QByteArray& body) {
    const json j = parseArray(body, "hub search");
    std::vector<HubRepo> out;
    for (const auto& o : j) {
        if (out.size() >= kMaxEntries) break;
        if (!o.is_object()) continue;
        HubRepo r;
        r.id = stringField(o, "id");
        if (!isValidRepoId(r.id)) continue;
        r.downloads = countField(o, "downloads");
        r.likes = countField(o, "likes");
        r.lastModified = stringField(o, "lastModified");
        // "gated": false, or "auto" / "manual" when access must be requested.
        if (auto g = o.find("gated"); g != o.end()) r.gated = g->is_string() || (g->is_boolean() && g->get<bool>());
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<HubFile> parseTreeReply(const QByteArray& body) {
    const json j = parseArray(body, "hub file list");
    std::vector<HubFile> out;
    for (const auto& o : j) {
        if (out.size() >= kMaxEntries) break;
        if (!o.is_object() || stringField(o, "type") != QLatin1String("file")) continue;
        HubFile f;
        f.path = stringField(o, "path");
        const auto name = safeLocalName(f.path);
        if (!name) continue;
        f.localName = *name;
        f.size = countField(o, "size", -1);
        if (auto lfs = o.find("lfs"); lfs != o.end() && lfs->is_object()) {
            const QString oid = stringField(*lfs, "oid").toLower();
            if (isSha256(oid)) f.sha256 = oid;
            f.size = countField(*lfs, "size", f.size);
        }
        if (f.size <= 0) continue;
        f.quantization = quantizationOf(f.localName);
        if (auto m = splitPattern().match(f.localName); m.hasMatch()) {
            f.splitIndex = m.captured(2).toInt();
            f.splitCount = m.captured(3).toInt();
            if (f.splitIndex < 1 || f.splitIndex > f.splitCount) continue;
        }
        out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), [](const HubFile& a, const HubFile& b) { return a.path < b.path; });
    return out;
}

bool isValidRepoId(const QString& repo) {
    static const QRegularExpression re(
        QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"));
    return re.match(repo).hasMatch() && !repo.contains(QLatin1String(".."));
}

std::optional<QString> safeLocalName(const QString& repoPath) {
    if (repoPath.isEmpty() || repoPath.size() > 500 || repoPath.startsWith(QLatin1Char('/')) ||
        repoPath.contains(QLatin1Char('\\')))
        return std::nullopt;
    const QStringList parts = repoPath.split(QLatin1Char('/'));
    for (const QString& p : parts)
        if (p.isEmpty() || p == QLatin1String(".") || p == QLatin1String("..")) return std::nullopt;
    const QString name = parts.last();
    if (name.size() > 200 || name.startsWith(QLatin1Char('.')) ||
        !name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive) || name.size() <= 5)
        return std::nullopt;
    for (QChar c : name)
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || QStringLiteral(":*?\"<>|").contains(c) || c.isNonCharacter() ||
            c.category() == QChar::Other_Format)
            return std::nullopt;
    return name;
}

QString quantizationOf(const QString& fileName) {
    static const QRegularExpression re(
        QStringLiteral("(?:^|[-._])(I?Q[1-8](?:_[0-9A-Z]{1,2}){0,2}|BF16|F16|F32|TQ[12]_0|MXFP4)(?=[-._]|$)"),
        QRegularExpression::CaseInsensitiveOption);
    QString stem = fileName;
    if (auto m = splitPattern().match(stem); m.hasMatch()) stem = m.captured(1);
    else if (stem.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) stem.chop(5);
    QString last;
    for (auto it = re.globalMatch(stem); it.hasNext();) last = it.next().captured(1);
    return last.toUpper();
}

std::vector<HubFile> splitSet(const std::vector<HubFile>& files, const HubFile& file) {
    if (file.splitCount == 0) return {file};
    const auto stemOf = [](const HubFile& f) {
        const int slash = f.path.lastIndexOf(QLatin1Char('/'));
        return f.path.left(slash + 1) + splitPattern().match(f.localName).captured(1);
    };
    const QString stem = stemOf(file);
    std::map<int, HubFile> parts;
    for (const auto& f : files)
        if (f.splitCount == file.splitCount && stemOf(f) == stem) parts.emplace(f.splitIndex, f);
    std::vector<HubFile> out;
    for (int i = 1; i <= file.splitCount; ++i) {
        auto it = parts.find(i);
        if (it == parts.end())
            throw Error(file.localName.toStdString(),
                        "part " + std::to_string(i) + " of " + std::to_string(file.splitCount) +
                            " is not in the repository");
        out.push_back(it->second);
    }
    return out;
}

QString normalizeHubUrl(const QString& url) {
    QString u = url.trimmed();
    while (u.endsWith(QLatin1Char('/'))) u.chop(1);
    const QUrl parsed(u, QUrl::StrictMode);
    if (!parsed.isValid() || (parsed.scheme() != QLatin1String("http") && parsed.scheme() != QLatin1String("https")) ||
        parsed.host().isEmpty() || parsed.hasQuery() || parsed.hasFragment())
        throw Error("hub URL", "'" + u.left(200).toStdString() + "' is not an http(s)://host address");
    return u;
}

QUrl searchUrl(const QString& base, const QString& query, SearchSort sort, int limit) {
    QUrl url(base + QStringLiteral("/api/models"));
    QUrlQuery q;
    q.addQueryItem(QStringLiteral("search"), QString::fromLatin1(QUrl::toPercentEncoding(query.left(200))));
    q.addQueryItem(QStringLiteral("filter"), QStringLiteral("gguf"));
    q.addQueryItem(QStringLiteral("sort"),
                   sort == SearchSort::Likes         ? QStringLiteral("likes")
                       : sort == SearchSort::Updated ? QStringLiteral("lastModified")
                                                     : QStringLiteral("downloads"));
    q.addQueryItem(QStringLiteral("direction"), QStringLiteral("-1"));
    q.addQueryItem(QStringLiteral("limit"), QString::number(std::clamp(limit, 1, 100)));
    // The default answer has no lastModified or gated; asking for fields returns id plus those.
    for (const char* field : {"downloads", "likes", "lastModified", "gated"})
        q.addQueryItem(QStringLiteral("expand[]"), QString::fromLatin1(field));
    url.setQuery(q);
    return url;
}

QUrl treeUrl(const QString& base, const QString& repo) {
    return QUrl(base + QStringLiteral("/api/models/") + repo + QStringLiteral("/tree/main?recursive=true"));
}

QUrl fileUrl(const QString& base, const QString& repo, const QString& path) {
    QByteArray encoded;
    for (const QString& part : path.split(QLatin1Char('/')))
        encoded += (encoded.isEmpty() ? "" : "/") + QUrl::toPercentEncoding(part);
    return QUrl::fromEncoded((base + QStringLiteral("/") + repo + QStringLiteral("/resolve/main/")).toUtf8() + encoded);
}

}  // namespace cairn::hub
