// One running Cairn per data folder: two instances on one database would each
// think they own its conversations (and the engine's partial replies).
#pragma once

#include <QLockFile>
#include <QString>

#include <memory>

namespace cairn::app {

// The lock file in `dataDir` (created when missing).
QString instanceLockPath(const QString& dataDir);

// Holds the data folder's lock while the returned object lives; nullptr when
// another live process holds it (`whyNot` then says which, in one line). A
// lock left by a process that died is taken over.
std::unique_ptr<QLockFile> lockDataFolder(const QString& dataDir, QString* whyNot = nullptr);

}  // namespace cairn::app
