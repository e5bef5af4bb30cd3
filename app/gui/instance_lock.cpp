#include "instance_lock.h"

#include <QDir>
#include <QObject>

namespace cairn::app {

QString instanceLockPath(const QString& dataDir) { return QDir(dataDir).filePath(QStringLiteral("cairn.lock")); }

std::unique_ptr<QLockFile> lockDataFolder(const QString& dataDir, QString* whyNot) {
    QDir().mkpath(dataDir);
    auto lock = std::make_unique<QLockFile>(instanceLockPath(dataDir));
    // Never stale by age (a Cairn may run for weeks); QLockFile still takes
    // over a lock whose process is gone.
    lock->setStaleLockTime(0);
    if (lock->tryLock(0)) return lock;
    if (whyNot) {
        qint64 pid = 0;
        QString host, app;
        if (lock->error() == QLockFile::LockFailedError && lock->getLockInfo(&pid, &host, &app))
            *whyNot = QObject::tr("Cairn is already running with the data folder %1 (process %2); "
                                  "use that window or quit it first.")
                          .arg(QDir::toNativeSeparators(dataDir))
                          .arg(pid);
        else
            *whyNot =
                QObject::tr("cannot lock the data folder %1 (%2)")
                    .arg(QDir::toNativeSeparators(dataDir),
                         lock->error() == QLockFile::PermissionError ? QObject::tr("no permission")
                                                                     : QObject::tr("another Cairn may be using it"));
    }
    return nullptr;
}

}  // namespace cairn::app
