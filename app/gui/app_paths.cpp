#include "app_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>

namespace cairn::app {

AppPaths AppPaths::standard(const QString& dataDirOverride) {
    AppPaths p;
    p.dataDir = dataDirOverride.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
                                          : QDir(dataDirOverride).absolutePath();
    if (!dataDirOverride.isEmpty()) p.settingsFile = p.dataDir + QStringLiteral("/settings.ini");
    return p;
}

void AppPaths::create() const {
    QDir().mkpath(dataDir);
    QDir().mkpath(modelsDir());
}

QStringList bundledModelDirs() {
    QStringList dirs;
    const QString exeDir = QCoreApplication::applicationDirPath();
    for (const auto& d :
         {exeDir + QStringLiteral("/../share/" CAIRN_APP_ID "/models"), exeDir + QStringLiteral("/models")}) {
        QDir dir(d);
        if (dir.exists() && !dirs.contains(dir.canonicalPath())) dirs << dir.canonicalPath();
    }
    // The source tree's models only for a build-tree run: an installed cairn
    // never lists the checkout it was built from.
    if (dirs.isEmpty() && QDir(QStringLiteral(CAIRN_SOURCE_MODELS_DIR)).exists())
        dirs << QDir(QStringLiteral(CAIRN_SOURCE_MODELS_DIR)).canonicalPath();
    return dirs;
}

}  // namespace cairn::app
