// Downloads of GGUF files from the hub: a queue run one job at a time, each
// job one file or one split set (all parts, fetched in order). Bytes go to
// `<name>.part` in the target folder, resumed with an HTTP Range request
// after a pause, a dropped connection or a restart; each part is checked
// against the repository's SHA-256 (the LFS oid) and only when every part of
// the set matches are they renamed into place (a rename in the same folder,
// so a listed model is always whole). A mismatching part is removed.
#pragma once

#include "hub_client.h"
#include "hub_listing.h"

#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

class QThread;

namespace cairn::hub {

enum class JobState { Queued, Downloading, Verifying, Paused, Done, Failed, Cancelled };
QString jobStateName(JobState state);  // "queued", "downloading", ...

struct DownloadJob {
    int id = 0;
    QString repo;
    std::vector<HubFile> parts;
    QString dir;
    JobState state = JobState::Queued;
    qint64 done = 0;  // bytes on disk for this job
    qint64 total = 0;  // bytes of every part
    double bytesPerSecond = 0;  // over the last few seconds
    qint64 secondsLeft = -1;  // -1: unknown
    QString error;  // one line when Failed
    bool resumable = false;  // Failed with the bytes kept: resume continues from them
    QStringList paths;  // the files in place once Done
    size_t part = 0;  // the part being fetched
};

class Downloader : public QObject {
    Q_OBJECT
public:
    explicit Downloader(HubClient* hub, QObject* parent = nullptr);
    ~Downloader() override;

    // Queues `parts` (one file or a whole split set) for `dir`; returns the job
    // id, or -1 with `refusal` set (a name that is not plain, no checksum
    // listed, a file of that name already there). `paused`: queued but not
    // started (jobs restored after a restart).
    int enqueue(const QString& repo, const std::vector<HubFile>& parts, const QString& dir, QString* refusal,
                bool paused = false);
    void pause(int id);
    void resume(int id);  // also retries a failed job, from the bytes kept
    void cancel(int id);  // removes its .part files
    void forget(int id);  // drops a finished job from the list
    const DownloadJob* job(int id) const;
    const std::deque<DownloadJob>& jobs() const { return jobs_; }

    // The CLI removes everything on failure; the app keeps the bytes to resume.
    void setKeepPartialOnFailure(bool keep) { keepPartial_ = keep; }
    // Free bytes of a folder (tests replace QStorageInfo).
    void setFreeSpaceProbe(std::function<qint64(const QString& dir)> probe) { freeSpace_ = std::move(probe); }
    static QString partPath(const QString& dir, const HubFile& file);

signals:
    void jobChanged(int id);  // state or progress (progress at most every 100 ms)
    void jobFinished(int id);  // Done, Failed or Cancelled

private:
    DownloadJob* find(int id);
    void startNext();
    void begin(DownloadJob& job);
    void fetchPart(DownloadJob& job);
    void onHeaders();
    void onBytes();
    void onTransferEnd();
    void verifyPart(DownloadJob& job);
    void onVerified(int id, const QString& digest);
    void complete(DownloadJob& job);
    void fail(DownloadJob& job, const QString& error, bool removeBytes);
    void removeParts(const DownloadJob& job);
    void stopActive();
    void noteProgress(DownloadJob& job, bool force);
    qint64 bytesOnDisk(const DownloadJob& job) const;

    HubClient* hub_;
    std::deque<DownloadJob> jobs_;
    int nextId_ = 1;
    bool keepPartial_ = true;
    std::function<qint64(const QString&)> freeSpace_;

    // The one running job's transfer.
    int active_ = 0;
    enum class Stop { None, Pause, Cancel } stop_ = Stop::None;
    std::unique_ptr<class HubTransfer> transfer_;
    QFile file_;
    qint64 have_ = 0;  // bytes of the current part on disk
    qint64 doneBefore_ = 0;  // bytes of the job's earlier parts
    bool restarted_ = false;  // the current part was restarted from 0 once already
    QString partError_;
    QElapsedTimer clock_;
    qint64 lastNote_ = 0;
    std::deque<std::pair<qint64, qint64>> samples_;  // (ms, done) for the speed

    QThread* verifier_ = nullptr;
    std::shared_ptr<std::atomic<bool>> verifyCancel_;
};

}  // namespace cairn::hub
