// cairn-cli download [--hub URL] REPO FILE [--dir DIR]
// Fetches one GGUF file (or the whole split set it belongs to) through the
// app's own downloader (app/hub): Range resume, SHA-256 check against the
// hub's listing, then the rename into DIR (default: the current folder).
// Progress on stderr; the paths on stdout. An access token for gated
// repositories comes from the HF_TOKEN environment variable. Exit status 0,
// 1 with a one-line reason on any failure (nothing is left in DIR then),
// 130 when interrupted (Ctrl+C; the partial file is removed too).
#include "command.h"
#include "hub_command.h"
#include "terminal_text.h"

#include "downloader.h"

#include "cairn/error.h"

#include <QDir>
#include <QTimer>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace cairn::cli {
namespace {

std::atomic<bool> interrupted{false};
extern "C" void onDownloadInterrupt(int) { interrupted = true; }

void printProgress(const hub::DownloadJob& job, bool terminal) {
    const QString name = job.parts[std::min(job.part, job.parts.size() - 1)].localName;
    QString line = QStringLiteral("%1  %2 / %3").arg(name, sizeText(job.done), sizeText(job.total));
    if (job.state == hub::JobState::Verifying) line += QStringLiteral("  verifying");
    else if (job.bytesPerSecond > 0) line += QStringLiteral("  %1/s").arg(sizeText(qint64(job.bytesPerSecond)));
    if (job.secondsLeft >= 0 && job.state == hub::JobState::Downloading)
        line += QStringLiteral("  %1 s left").arg(job.secondsLeft);
    std::fprintf(stderr, terminal ? "\r%s\033[K" : "%s\n", terminalSafe(line.toStdString()).c_str());
}

}  // namespace

int runDownload(Args& args) {
    const QString hubUrl = hubUrlOption(args);
    const QString dir = QString::fromStdString(args.option("--dir").value_or("."));
    const auto rest = args.positionals();
    if (rest.size() != 2) throw Error("download", "usage: cairn-cli download [--hub URL] REPO FILE [--dir DIR]");
    const QString repo = QString::fromStdString(rest[0]), wanted = QString::fromStdString(rest[1]);
    if (!QDir(dir).exists()) throw Error("download", "the folder " + dir.toStdString() + " does not exist");

    HubCommand command(hubUrl);
    hub::Downloader downloader(&command.client());
    downloader.setKeepPartialOnFailure(false);

    auto finish = [&] { command.done(); };
    QEventLoop& loop = command.loop();
    QString error;
    int id = -1;
    command.client().listFiles(repo, [&](std::vector<hub::HubFile> files, QString listError) {
        if (!listError.isEmpty()) {
            error = listError;
            return finish();
        }
        auto it = std::find_if(files.begin(), files.end(), [&](const hub::HubFile& f) { return f.path == wanted; });
        if (it == files.end())
            it = std::find_if(files.begin(), files.end(), [&](const hub::HubFile& f) { return f.localName == wanted; });
        if (it == files.end()) {
            error = QStringLiteral("%1: no GGUF file '%2' in the repository").arg(repo, wanted.left(200));
            return finish();
        }
        try {
            id = downloader.enqueue(repo, hub::splitSet(files, *it), dir, &error);
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        if (id < 0) finish();
    });
    const bool terminal = isatty(2);
    int lastDecile = -1;
    QObject::connect(&downloader, &hub::Downloader::jobChanged, &loop, [&](int changed) {
        const hub::DownloadJob* job = downloader.job(changed);
        if (!job || job->total <= 0) return;
        const int decile = int(job->done * 10 / job->total);
        if (terminal || decile != lastDecile || job->state == hub::JobState::Verifying) printProgress(*job, terminal);
        lastDecile = decile;
    });
    QObject::connect(&downloader, &hub::Downloader::jobFinished, &loop, [&](int) { finish(); });
    interrupted = false;
    auto previous = std::signal(SIGINT, onDownloadInterrupt);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (interrupted && id > 0) downloader.cancel(id);
        else if (interrupted) finish();
    });
    poll.start(50);
    command.wait();
    std::signal(SIGINT, previous);
    if (terminal) std::fputc('\n', stderr);

    const hub::DownloadJob* job = id > 0 ? downloader.job(id) : nullptr;
    if (interrupted) {
        std::fprintf(stderr, "cairn-cli download: interrupted; nothing was kept\n");
        return 130;
    }
    if (!job || job->state != hub::JobState::Done) {
        if (job) error = job->error;
        std::fprintf(stderr, "cairn-cli download: %s\n", terminalSafe(error.toStdString()).c_str());
        return 1;
    }
    for (const QString& path : job->paths) std::printf("%s\n", terminalSafe(path.toStdString()).c_str());
    return 0;
}

}  // namespace cairn::cli
