// Where Cairn keeps things: the data folder (database, models folder) from
// QStandardPaths unless overridden (tests, --data-dir), and the bundled models.
#pragma once

#include <QString>
#include <QStringList>

namespace cairn::app {

struct AppPaths {
    QString dataDir;  // database and models/ live here
    QString settingsFile;  // empty: the platform's QSettings location

    QString databasePath() const { return dataDir + QStringLiteral("/conversations.sqlite"); }
    QString modelsDir() const { return dataDir + QStringLiteral("/models"); }
    // The kernel calibration's cache (cairn/kernel_calibration.h); cairn-cli --calibrate uses it too.
    QString kernelCalibrationPath() const { return dataDir + QStringLiteral("/kernel-calibration.json"); }

    // The standard locations (QStandardPaths::AppDataLocation), or `dataDirOverride`.
    static AppPaths standard(const QString& dataDirOverride = {});
    // Makes the data and models folders (the controller does, not --help).
    void create() const;
};

// Folders holding the models that ship with Cairn: next to the executable
// (../share/<app id>/models for an installed layout) and the source tree's resources/models.
QStringList bundledModelDirs();

}  // namespace cairn::app
