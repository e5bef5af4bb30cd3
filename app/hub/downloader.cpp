#include "downloader.h"

#include "hub_errors.h"
#include "hub_transfer.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QThread>

namespace cairn::hub {
namespace {

// Room left on the disk beyond the download itself.
constexpr qint64 kSpaceMargin = qint64(64) << 20;

QString sizeText(qint64 bytes) { return QLocale::c().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat); }

// SHA-256 of a file in lowercase hex; "" when it cannot be read or `cancel` is set.
QString sha256Of(const QString& path, const std::atomic<bool>& cancel) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray buffer(4 << 20, Qt::Uninitialized);
    for (;;) {
        if (cancel) return {};
        const qint64 n = f.read(buffer.data(), buffer.size());
        if (n < 0) return {};
        if (n == 0) break;
        hash.addData(QByteArrayView(buffer.constData(), n));
    }
    return QString::fromLatin1(hash.result().toHex());
}

// The first byte of a 206 answer's "Content-Range: bytes A-B/N" (-1 when unreadable).
qint64 contentRangeStart(const QByteArray& header) {
    static const QRegularExpression re(QStringLiteral("^bytes (\\d+)-(\\d+)/(\\d+|\\*)$"));
    const auto m = re.match(QString::fromLatin1(header.trimmed()));
    return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

}  // namespace

QString jobStateName(JobState state) {
    switch (state) {
    case JobState::Queued: return QStringLiteral("queued");
    case JobState::Downloading: return QStringLiteral("downloading");
    case JobState::Verifying: return QStringLiteral("verifying");
    case JobState::Paused: return QStringLiteral("paused");
    case JobState::Done: return QStringLiteral("done");
    case JobState::Failed: return QStringLiteral("failed");
    case JobState::Cancelled: return QStringLiteral("cancelled");
    }
    return {};
}

Downloader::Downloader(HubClient* hub, QObject* parent) : QObject(parent), hub_(hub) {
    freeSpace_ = [](const QString& dir) { return QStorageInfo(dir).bytesAvailable(); };
    clock_.start();
}

Downloader::~Downloader() {
    stopActive();
    if (verifier_) {
        *verifyCancel_ = true;
        verifier_->wait();
        delete verifier_;
    }
}

QString Downloader::partPath(const QString& dir, const HubFile& file) {
    return QDir(dir).filePath(file.localName + QStringLiteral(".part"));
}

DownloadJob* Downloader::find(int id) {
    for (auto& j : jobs_)
        if (j.id == id) return &j;
    return nullptr;
}

const DownloadJob* Downloader::job(int id) const { return const_cast<Downloader*>(this)->find(id); }

qint64 Downloader::bytesOnDisk(const DownloadJob& job) const {
    qint64 sum = 0;
    for (const auto& p : job.parts) sum += std::min(QFileInfo(partPath(job.dir, p)).size(), p.size);
    return sum;
}

int Downloader::enqueue(const QString& repo, const std::vector<HubFile>& parts, const QString& dir, QString* refusal,
                        bool paused) {
    auto refuse = [&](const QString& why) {
        if (refusal) *refusal = why;
        return -1;
    };
    if (!isValidRepoId(repo))
        return refuse(QStringLiteral("'%1' is not a repository name (owner/name)").arg(repo.left(120)));
    if (parts.empty()) return refuse(QStringLiteral("%1: no file to download").arg(repo));
    if (!QDir(dir).exists()) return refuse(QStringLiteral("the folder %1 does not exist").arg(dir));
    DownloadJob job;
    for (const auto& p : parts) {
        // Names come from the hub: checked again here, whoever built the list.
        const auto name = safeLocalName(p.path);
        if (!name || *name != p.localName)
            return refuse(
                QStringLiteral("%1: '%2' is not a plain file name; not downloaded").arg(repo, p.path.left(200)));
        if (p.sha256.isEmpty())
            return refuse(QStringLiteral("%1: the hub lists no SHA-256 for %2, so it could not be verified")
                              .arg(repo, p.localName));
        if (p.size <= 0) return refuse(QStringLiteral("%1: the hub lists no size for %2").arg(repo, p.localName));
        if (QFileInfo::exists(QDir(dir).filePath(p.localName)))
            return refuse(QStringLiteral("%1 is already in %2").arg(p.localName, dir));
        for (const auto& j : jobs_)
            if (j.dir == dir && j.state != JobState::Done && j.state != JobState::Cancelled &&
                j.state != JobState::Failed)
                for (const auto& q : j.parts)
                    if (q.localName == p.localName)
                        return refuse(QStringLiteral("%1 is already being downloaded").arg(p.localName));
        job.total += p.size;
    }
    job.id = nextId_++;
    job.repo = repo;
    job.parts = parts;
    job.dir = dir;
    job.state = paused ? JobState::Paused : JobState::Queued;
    job.done = bytesOnDisk(job);
    jobs_.push_back(std::move(job));
    emit jobChanged(jobs_.back().id);
    startNext();
    return jobs_.back().id;
}

void Downloader::pause(int id) {
    DownloadJob* j = find(id);
    if (!j) return;
    if (j->state == JobState::Queued) {
        j->state = JobState::Paused;
        emit jobChanged(id);
    } else if (j->state == JobState::Downloading && active_ == id) {
        stop_ = Stop::Pause;
        transfer_->abort();
    }
}

void Downloader::resume(int id) {
    DownloadJob* j = find(id);
    if (!j || (j->state != JobState::Paused && j->state != JobState::Failed)) return;
    j->state = JobState::Queued;
    j->error.clear();
    j->resumable = false;
    j->done = bytesOnDisk(*j);
    emit jobChanged(id);
    startNext();
}

void Downloader::cancel(int id) {
    DownloadJob* j = find(id);
    if (!j || j->state == JobState::Done || j->state == JobState::Cancelled) return;
    if (active_ == id && j->state == JobState::Downloading) {
        stop_ = Stop::Cancel;
        transfer_->abort();
        return;
    }
    if (active_ == id && j->state == JobState::Verifying) {
        *verifyCancel_ = true;  // onVerified sees the Cancelled state and drops the result
        active_ = 0;
    }
    removeParts(*j);
    j->state = JobState::Cancelled;
    j->done = 0;
    emit jobChanged(id);
    emit jobFinished(id);
    startNext();
}

void Downloader::forget(int id) {
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
        if (it->id == id &&
            (it->state == JobState::Done || it->state == JobState::Cancelled || it->state == JobState::Failed)) {
            jobs_.erase(it);
            return;
        }
}

void Downloader::removeParts(const DownloadJob& job) {
    for (const auto& p : job.parts) QFile::remove(partPath(job.dir, p));
}

void Downloader::startNext() {
    if (active_) return;
    for (auto& j : jobs_)
        if (j.state == JobState::Queued) return begin(j);
}

void Downloader::begin(DownloadJob& job) {
    active_ = job.id;
    const qint64 remaining = job.total - bytesOnDisk(job);
    const qint64 free = freeSpace_(job.dir);
    if (free >= 0 && remaining + kSpaceMargin > free)
        return fail(job,
                    QStringLiteral("not enough disk space in %1: %2 more are needed, %3 are free")
                        .arg(job.dir, sizeText(remaining), sizeText(free)),
                    false);
    job.state = JobState::Downloading;
    job.part = 0;
    job.error.clear();
    samples_.clear();
    fetchPart(job);
}

void Downloader::fetchPart(DownloadJob& job) {
    if (job.part == job.parts.size()) return complete(job);
    const HubFile& p = job.parts[job.part];
    doneBefore_ = 0;
    for (size_t i = 0; i < job.part; ++i) doneBefore_ += job.parts[i].size;
    file_.close();
    file_.setFileName(partPath(job.dir, p));
    if (!file_.open(QIODevice::ReadWrite))
        return fail(job, QStringLiteral("cannot write %1: %2").arg(file_.fileName(), file_.errorString()), false);
    have_ = file_.size();
    if (have_ > p.size) {  // longer than the listing: not ours to trust
        file_.resize(0);
        have_ = 0;
    }
    if (have_ == p.size) {
        file_.close();
        return verifyPart(job);
    }
    file_.seek(have_);
    job.state = JobState::Downloading;
    stop_ = Stop::None;
    partError_.clear();
    TransferOptions options = hub_->transferOptions();
    if (have_ > 0) options.rangeStart = have_;
    transfer_ = std::make_unique<HubTransfer>(hub_->network(), fileUrl(hub_->baseUrl(), job.repo, p.path), options);
    connect(transfer_.get(), &HubTransfer::headersReady, this, &Downloader::onHeaders);
    connect(transfer_.get(), &HubTransfer::bytesReady, this, &Downloader::onBytes);
    connect(transfer_.get(), &HubTransfer::finished, this, &Downloader::onTransferEnd);
    noteProgress(job, true);
    transfer_->start();
}

void Downloader::onHeaders() {
    DownloadJob* job = find(active_);
    if (!job) return;
    const HubFile& p = job->parts[job->part];
    const int status = transfer_->status();
    QNetworkReply* r = transfer_->reply();
    if (status == 206) {
        if (contentRangeStart(r->rawHeader("Content-Range")) != have_) {
            partError_ =
                QStringLiteral("%1: the hub answered the resume with other bytes than asked for").arg(p.localName);
            transfer_->abort();
        }
        return;
    }
    if (status == 200) {
        if (have_ > 0) {  // the server ignored the Range: the body starts at byte 0
            file_.resize(0);
            file_.seek(0);
            have_ = 0;
        }
        const QVariant length = r->header(QNetworkRequest::ContentLengthHeader);
        if (length.isValid() && length.toLongLong() != p.size) {
            partError_ = QStringLiteral("%1: the hub sends %2 bytes, its listing says %3")
                             .arg(p.localName)
                             .arg(length.toLongLong())
                             .arg(p.size);
            transfer_->abort();
        }
        return;
    }
    if (status == 416 && !restarted_) {  // the bytes kept do not fit the file any more: start over
        restarted_ = true;
        file_.resize(0);
        have_ = 0;
        partError_ = QStringLiteral("restart");
        transfer_->abort();
        return;
    }
    // The answer ends by itself (its body is dropped); aborting now would report a second error.
    partError_ = failureLine(job->repo + QLatin1Char('/') + p.path, status, r);
}

void Downloader::onBytes() {
    DownloadJob* job = find(active_);
    if (!job) return;
    const QByteArray data = transfer_->reply()->readAll();
    if (!partError_.isEmpty()) return;  // an error answer's body, or bytes after a refusal
    const HubFile& p = job->parts[job->part];
    if (have_ + data.size() > p.size) {
        partError_ =
            QStringLiteral("%1: the hub sent more bytes than its listing says (%2)").arg(p.localName).arg(p.size);
        transfer_->abort();
        return;
    }
    if (file_.write(data) != data.size()) {
        partError_ = QStringLiteral("cannot write %1: %2").arg(file_.fileName(), file_.errorString());
        transfer_->abort();
        return;
    }
    have_ += data.size();
    job->done = doneBefore_ + have_;
    noteProgress(*job, false);
}

void Downloader::onTransferEnd() {
    DownloadJob* job = find(active_);
    if (job && transfer_->reply() && transfer_->reply()->bytesAvailable() > 0) onBytes();
    // Deleted later: this runs inside the transfer's own signal.
    HubTransfer* transfer = transfer_.release();
    transfer->disconnect(this);
    transfer->deleteLater();
    if (!job) return;
    const HubFile& p = job->parts[job->part];
    file_.flush();
    file_.close();
    job->done = doneBefore_ + have_;
    const Stop stop = std::exchange(stop_, Stop::None);
    if (stop == Stop::Pause) {
        job->state = JobState::Paused;
        active_ = 0;
        emit jobChanged(job->id);
        return startNext();
    }
    if (stop == Stop::Cancel) {
        removeParts(*job);
        job->state = JobState::Cancelled;
        job->done = 0;
        active_ = 0;
        emit jobChanged(job->id);
        emit jobFinished(job->id);
        return startNext();
    }
    if (partError_ == QLatin1String("restart")) return fetchPart(*job);
    if (!partError_.isEmpty()) return fail(*job, partError_, false);
    if (have_ == p.size && transfer->status() >= 200 && transfer->status() < 300) return verifyPart(*job);
    const int status = transfer->status();
    QString line = status >= 300 ? failureLine(job->repo + QLatin1Char('/') + p.path, status, transfer->reply())
                                 : failureLine(p.localName, 0, transfer->timedOut() ? nullptr : transfer->reply());
    if (transfer->timedOut()) line = QStringLiteral("%1: the connection stalled (no data for 30 s)").arg(p.localName);
    else if (status >= 200 && status < 300 && transfer->reply() && transfer->reply()->error() == QNetworkReply::NoError)
        line = QStringLiteral("%1: the connection ended after %2 of %3")
                   .arg(p.localName, sizeText(have_), sizeText(p.size));
    fail(*job, line, false);
}

void Downloader::verifyPart(DownloadJob& job) {
    job.state = JobState::Verifying;
    emit jobChanged(job.id);
    const QString path = partPath(job.dir, job.parts[job.part]);
    const int id = job.id;
    verifyCancel_ = std::make_shared<std::atomic<bool>>(false);
    auto digest = std::make_shared<QString>();
    auto cancelFlag = verifyCancel_;
    QThread* thread = QThread::create([path, digest, cancelFlag] { *digest = sha256Of(path, *cancelFlag); });
    verifier_ = thread;
    connect(thread, &QThread::finished, this, [this, thread, id, digest] {
        if (verifier_ == thread) verifier_ = nullptr;
        thread->deleteLater();
        onVerified(id, *digest);
    });
    thread->start();
}

void Downloader::onVerified(int id, const QString& digest) {
    DownloadJob* job = find(id);
    if (!job || job->state != JobState::Verifying || active_ != id) return;  // cancelled meanwhile
    const HubFile& p = job->parts[job->part];
    if (digest != p.sha256) {
        QFile::remove(partPath(job->dir, p));
        const QString got = digest.isEmpty() ? QStringLiteral("unreadable") : digest.left(12) + QStringLiteral("…");
        return fail(*job,
                    QStringLiteral("%1: checksum mismatch (the hub lists SHA-256 %2…, the download has %3); "
                                   "the file was removed")
                        .arg(p.localName, p.sha256.left(12), got),
                    false);
    }
    ++job->part;
    restarted_ = false;
    fetchPart(*job);
}

void Downloader::complete(DownloadJob& job) {
    // Every part matched its checksum: only now do they take their names.
    for (const auto& p : job.parts)
        if (QFileInfo::exists(QDir(job.dir).filePath(p.localName)))
            return fail(job,
                        QStringLiteral("%1 appeared in %2 during the download; the download is kept as .part")
                            .arg(p.localName, job.dir),
                        false);
    job.paths.clear();
    for (const auto& p : job.parts) {
        const QString target = QDir(job.dir).filePath(p.localName);
        if (!QFile::rename(partPath(job.dir, p), target))
            return fail(job, QStringLiteral("cannot move %1 into place").arg(p.localName), false);
        job.paths << target;
    }
    job.state = JobState::Done;
    job.done = job.total;
    job.secondsLeft = 0;
    active_ = 0;
    emit jobChanged(job.id);
    emit jobFinished(job.id);
    startNext();
}

void Downloader::fail(DownloadJob& job, const QString& error, bool removeBytes) {
    job.state = JobState::Failed;
    job.error = error;
    if (removeBytes || !keepPartial_) removeParts(job);
    for (const auto& p : job.parts)  // an empty .part holds nothing to resume
        if (QFileInfo(partPath(job.dir, p)).size() == 0) QFile::remove(partPath(job.dir, p));
    job.done = bytesOnDisk(job);
    job.resumable = job.done > 0;
    job.bytesPerSecond = 0;
    job.secondsLeft = -1;
    restarted_ = false;
    if (active_ == job.id) active_ = 0;
    emit jobChanged(job.id);
    emit jobFinished(job.id);
    startNext();
}

void Downloader::stopActive() {
    if (transfer_) {
        transfer_->disconnect(this);
        transfer_.reset();
    }
    file_.close();
}

void Downloader::noteProgress(DownloadJob& job, bool force) {
    const qint64 now = clock_.elapsed();
    if (!force && now - lastNote_ < 100) return;
    lastNote_ = now;
    samples_.emplace_back(now, job.done);
    while (samples_.size() > 2 && now - samples_.front().first > 3000) samples_.pop_front();
    const auto& [t0, b0] = samples_.front();
    job.bytesPerSecond = now > t0 ? double(job.done - b0) * 1000.0 / double(now - t0) : 0;
    job.secondsLeft = job.bytesPerSecond > 1 ? qint64(double(job.total - job.done) / job.bytesPerSecond) : -1;
    emit jobChanged(job.id);
}

}  // namespace cairn::hub
