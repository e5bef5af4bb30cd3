#include "hub_downloads.h"

#include "model_catalog.h"

#include "model_fit.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QVariantMap>

#include <algorithm>
#include <map>

namespace cairn::app {
namespace {

const QString kTokenAccount = QStringLiteral("hub-token");

QString durationText(qint64 seconds) {
    if (seconds < 0) return {};
    if (seconds < 90) return QObject::tr("%1 s left").arg(seconds);
    if (seconds < 5400) return QObject::tr("%1 min left").arg((seconds + 30) / 60);
    return QObject::tr("%1 h %2 min left").arg(seconds / 3600).arg((seconds % 3600) / 60);
}

}  // namespace

HubDownloads::HubDownloads(QObject* parent) : QObject(parent) {
    availableMemory_ = qint64(hub::availableMemoryBytes());
}

HubDownloads::~HubDownloads() = default;

void HubDownloads::setSettings(AppSettings* s) {
    settings_ = s;
    emit configChanged();
}

void HubDownloads::setKeys(KeyVault* k) {
    keys_ = k;
    emit configChanged();
}

void HubDownloads::setModelsDir(const QString& dir) {
    modelsDir_ = dir;
    emit configChanged();
}

void HubDownloads::setAvailableMemory(qint64 bytes) {
    availableMemory_ = bytes;
    rebuildFiles();
}

QVariantList HubDownloads::recommended() const {
    QVariantList out;
    for (const auto& r : hub::recommendedModels()) out.push_back(QVariantMap{{"repo", r.repo}, {"note", r.note}});
    return out;
}

void HubDownloads::start() {
    if (started_ || !settings_) return;
    started_ = true;
    QString url = settings_->hubUrl();
    try {
        client_ = std::make_unique<hub::HubClient>(url);
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()) + tr(" (using Hugging Face)"));
        client_ = std::make_unique<hub::HubClient>(hub::kDefaultHubUrl);
    }
    downloader_ = std::make_unique<hub::Downloader>(client_.get());
    connect(downloader_.get(), &hub::Downloader::jobChanged, this, [this](int id) {
        const hub::DownloadJob* j = downloader_->job(id);
        rebuildJobs();
        if (j && j->state != hub::JobState::Downloading) saveJobs();
    });
    connect(downloader_.get(), &hub::Downloader::jobFinished, this, [this](int id) {
        const hub::DownloadJob* j = downloader_->job(id);
        saveJobs();
        if (j && j->state == hub::JobState::Done && !j->paths.isEmpty()) emit modelDownloaded(j->paths.first());
    });
    restoreJobs();
}

// The token is read from the keyring at the first request, not at start: an
// app that never downloads never asks the keyring (nor warns that it has none).
void HubDownloads::withToken(std::function<void()> action) {
    if (tokenRead_ || !keys_) {
        tokenRead_ = true;
        return action();
    }
    QPointer<HubDownloads> self(this);
    keys_->fetch(kTokenAccount, [self, action = std::move(action)](const QString& token) {
        if (!self || !self->client_) return;
        if (!self->tokenRead_) {
            self->tokenRead_ = true;
            self->client_->setToken(token);
            self->hasToken_ = !token.isEmpty();
            emit self->tokenChanged();
        }
        action();
    });
}

void HubDownloads::setError(const QString& e) {
    if (error_ == e) return;
    error_ = e;
    emit errorChanged();
}

void HubDownloads::setBusy(int delta) {
    const bool was = busy();
    busy_ += delta;
    if (was != busy()) emit busyChanged();
}

void HubDownloads::search(const QString& query, int sort) {
    if (!client_) return;
    if (!tokenRead_) return withToken([this, query, sort] { search(query, sort); });
    const int generation = ++generation_;
    setError({});
    setBusy(+1);
    const auto order = sort == 1 ? hub::SearchSort::Likes
        : sort == 2              ? hub::SearchSort::Updated
                                 : hub::SearchSort::Downloads;
    QPointer<HubDownloads> self(this);
    client_->search(query.trimmed(), order, 30, [self, generation](std::vector<hub::HubRepo> found, QString error) {
        if (!self) return;
        self->setBusy(-1);
        if (generation != self->generation_) return;
        self->setError(error);
        self->repos_.clear();
        for (const auto& r : found)
            self->repos_.push_back(QVariantMap{{"id", r.id},
                                               {"downloads", r.downloads},
                                               {"likes", r.likes},
                                               {"updated", r.lastModified.left(10)},
                                               {"gated", r.gated}});
        emit self->reposChanged();
    });
}

void HubDownloads::openRepo(const QString& repo) {
    if (!client_) return;
    if (!tokenRead_) return withToken([this, repo] { openRepo(repo); });
    const int generation = ++generation_;
    setError({});
    currentRepo_ = repo;
    files_.clear();
    peek_.reset();
    architectureNote_ = tr("Reading the file list…");
    rebuildFiles();
    setBusy(+1);
    QPointer<HubDownloads> self(this);
    client_->listFiles(repo, [self, generation, repo](std::vector<hub::HubFile> files, QString error) {
        if (!self) return;
        self->setBusy(-1);
        if (generation != self->generation_) return;
        self->setError(error);
        self->files_ = std::move(files);
        self->architectureNote_ =
            self->files_.empty() && error.isEmpty() ? tr("No GGUF files in this repository.") : QString();
        self->rebuildFiles();
        if (self->files_.empty()) return;
        // One header for the repository: its files share the architecture and geometry.
        hub::HubFile first = self->files_.front();
        for (const auto& f : self->files_)
            if (f.splitIndex <= 1) {
                first = f;
                break;
            }
        self->architectureNote_ = tr("Reading the model header…");
        emit self->filesChanged();
        self->setBusy(+1);
        self->client_->peekHeader(repo, first, [self, generation](hub::GgufPeek peek, QString peekError) {
            if (!self) return;
            self->setBusy(-1);
            if (generation != self->generation_) return;
            if (!peekError.isEmpty()) {
                self->architectureNote_ = tr("Architecture unknown: %1").arg(peekError);
            } else {
                self->peek_ = std::move(peek);
                const QString arch = self->peek_->architecture;
                self->architectureNote_ = arch.isEmpty() ? tr("Architecture unknown: the header names none")
                    : hub::isSupportedArchitecture(arch) ? tr("Architecture: %1 (Cairn runs it)").arg(arch)
                                                         : tr("Architecture: %1 — Cairn does not run it yet").arg(arch);
            }
            self->rebuildFiles();
        });
    });
}

void HubDownloads::rebuildFiles() {
    fileGroups_.clear();
    const int ctx = settings_ ? settings_->contextSize() : 4096;
    const std::optional<uint64_t> kvEstimate = peek_ ? hub::kvCacheBytes(*peek_, ctx) : std::nullopt;
    const bool kvKnown = kvEstimate.has_value();
    const uint64_t kv = kvEstimate.value_or(0);
    const QString arch = peek_ ? peek_->architecture : QString();
    const bool unsupported = !arch.isEmpty() && !hub::isSupportedArchitecture(arch);
    // One row per file or split set, grouped by quantization, smallest first.
    std::map<QString, QVariantList> groups;
    std::map<QString, qint64> groupSize;
    for (const auto& f : files_) {
        if (f.splitIndex > 1) continue;
        qint64 size = f.size;
        int parts = 1;
        QString problem;
        if (f.splitCount) {
            try {
                const auto set = hub::splitSet(files_, f);
                size = 0;
                for (const auto& p : set) size += p.size;
                parts = int(set.size());
            } catch (const std::exception& e) {
                problem = QString::fromUtf8(e.what());
            }
        }
        const hub::Fit fit = kvKnown
            ? hub::estimateFit(uint64_t(size) + kv, uint64_t(std::max<qint64>(availableMemory_, 0)))
            : hub::Fit::Unknown;
        QString fitText;
        if (kvKnown)
            fitText = tr("needs about %1 (weights + memory for %2 tokens); %3 available")
                          .arg(humanBytes(quint64(size) + kv))
                          .arg(ctx)
                          .arg(humanBytes(quint64(availableMemory_)));
        const QString quant = f.quantization.isEmpty() ? tr("other") : f.quantization;
        groups[quant].push_back(
            QVariantMap{{"path", f.path},
                        {"name", f.localName},
                        {"size", double(size)},
                        {"sizeText", humanBytes(quint64(size))},
                        {"parts", parts},
                        {"fit", hub::fitLabel(fit)},
                        {"fitText", fitText},
                        {"supported", !unsupported && problem.isEmpty()},
                        {"note",
                         !problem.isEmpty() ? problem
                             : unsupported  ? tr("not supported: %1").arg(arch)
                             : parts > 1 ? tr("%1 parts: the engine loads one file, so merge them after the download "
                                              "(llama-gguf-split --merge)")
                                               .arg(parts)
                                         : QString()}});
        groupSize[quant] = groupSize.count(quant) ? std::min(groupSize[quant], size) : size;
    }
    std::vector<std::pair<qint64, QString>> order;
    for (const auto& [q, s] : groupSize) order.emplace_back(s, q);
    std::sort(order.begin(), order.end());
    for (const auto& [s, q] : order) fileGroups_.push_back(QVariantMap{{"quantization", q}, {"files", groups[q]}});
    emit filesChanged();
}

bool HubDownloads::download(const QString& path) {
    if (!downloader_) return false;
    for (const auto& f : files_) {
        if (f.path != path) continue;
        QString refusal;
        try {
            QDir().mkpath(modelsDir_);
            if (downloader_->enqueue(currentRepo_, hub::splitSet(files_, f), modelsDir_, &refusal) > 0) {
                setError({});
                saveJobs();
                return true;
            }
        } catch (const std::exception& e) {
            refusal = QString::fromUtf8(e.what());
        }
        setError(refusal);
        return false;
    }
    setError(tr("%1 is not a file of %2").arg(path, currentRepo_));
    return false;
}

void HubDownloads::pause(int id) {
    if (downloader_) downloader_->pause(id);
}
void HubDownloads::resume(int id) {
    if (downloader_) withToken([this, id] { downloader_->resume(id); });
}
void HubDownloads::cancel(int id) {
    if (downloader_) downloader_->cancel(id);
}

void HubDownloads::forget(int id) {
    if (!downloader_) return;
    downloader_->forget(id);
    rebuildJobs();
    saveJobs();
}

QString HubDownloads::setHubUrl(const QString& url) {
    if (!client_ || !settings_) return tr("not started");
    const QString wanted = url.trimmed().isEmpty() ? hub::kDefaultHubUrl : url;
    try {
        client_->setBaseUrl(wanted);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    settings_->setHubUrl(client_->baseUrl());
    return {};
}

void HubDownloads::setToken(const QString& token) {
    tokenRead_ = true;
    if (client_) client_->setToken(token.trimmed());
    hasToken_ = !token.trimmed().isEmpty();
    emit tokenChanged();
    if (keys_) keys_->store(kTokenAccount, token.trimmed());
}

void HubDownloads::rebuildJobs() {
    std::vector<DownloadJobRow> rows;
    for (const auto& j : downloader_->jobs()) {
        DownloadJobRow r;
        r.id = j.id;
        r.name = j.parts.front().localName + (j.parts.size() > 1 ? tr(" (%1 parts)").arg(j.parts.size()) : QString());
        r.repo = j.repo;
        r.state = hub::jobStateName(j.state);
        r.status = r.state;
        if (j.state == hub::JobState::Downloading && j.bytesPerSecond > 0)
            r.status = tr("%1/s, %2").arg(humanBytes(quint64(j.bytesPerSecond)), durationText(j.secondsLeft));
        r.progress = j.total > 0 ? double(j.done) / double(j.total) : 0.0;
        r.bytesText = tr("%1 of %2").arg(humanBytes(quint64(j.done)), humanBytes(quint64(j.total)));
        r.error = j.error;
        r.path = j.paths.isEmpty() ? QString() : j.paths.first();
        r.canPause = j.state == hub::JobState::Downloading || j.state == hub::JobState::Queued;
        r.canResume = j.state == hub::JobState::Paused || j.state == hub::JobState::Failed;
        r.canCancel = j.state != hub::JobState::Done && j.state != hub::JobState::Cancelled;
        r.canForget = j.state == hub::JobState::Done || j.state == hub::JobState::Cancelled;
        rows.push_back(std::move(r));
    }
    jobs_.sync(std::move(rows));
}

// Unfinished jobs as JSON in the settings: repository, folder, and each part's
// path, size and checksum (what the next start needs to resume without the hub).
void HubDownloads::saveJobs() {
    if (!settings_ || !downloader_) return;
    nlohmann::json out = nlohmann::json::array();
    for (const auto& j : downloader_->jobs()) {
        if (j.state == hub::JobState::Done || j.state == hub::JobState::Cancelled) continue;
        nlohmann::json parts = nlohmann::json::array();
        for (const auto& p : j.parts)
            parts.push_back({{"path", p.path.toStdString()}, {"size", p.size}, {"sha256", p.sha256.toStdString()}});
        out.push_back({{"repo", j.repo.toStdString()}, {"dir", j.dir.toStdString()}, {"parts", parts}});
    }
    settings_->setHubDownloads(QString::fromStdString(out.dump()));
}

void HubDownloads::restoreJobs() {
    const std::string text = settings_->hubDownloads().toStdString();
    if (text.empty()) return;
    const nlohmann::json saved = nlohmann::json::parse(text, nullptr, false);
    if (!saved.is_array()) return;
    for (const auto& j : saved) {
        if (!j.is_object() || !j.contains("repo") || !j["repo"].is_string() || !j.contains("dir") ||
            !j["dir"].is_string() || !j.contains("parts") || !j["parts"].is_array())
            continue;
        std::vector<hub::HubFile> parts;
        for (const auto& p : j["parts"]) {
            if (!p.is_object() || !p.value("path", nlohmann::json()).is_string() ||
                !p.value("size", nlohmann::json()).is_number_integer() ||
                !p.value("sha256", nlohmann::json()).is_string())
                continue;
            hub::HubFile f;
            f.path = QString::fromStdString(p["path"].get<std::string>());
            f.localName = hub::safeLocalName(f.path).value_or(QString());
            f.size = p["size"].get<qint64>();
            f.sha256 = QString::fromStdString(p["sha256"].get<std::string>());
            parts.push_back(f);
        }
        QString refusal;  // a bad entry (edited by hand, or the file is there by now) is dropped
        downloader_->enqueue(QString::fromStdString(j["repo"].get<std::string>()), parts,
                             QString::fromStdString(j["dir"].get<std::string>()), &refusal, /*paused=*/true);
    }
    rebuildJobs();
    saveJobs();
}

}  // namespace cairn::app
