// The store's schema as an ordered list of migrations keyed by PRAGMA
// user_version: step k turns a version k-1 database into version k. A database
// from a newer Cairn (user_version above the latest) is refused, never altered.
#pragma once

#include "cairn/store/sqlite.h"

#include <vector>

namespace cairn::store {

struct Migration {
    int version;  // user_version after this step
    const char* description;
    const char* sql;  // constant SQL, run inside one transaction
};

const std::vector<Migration>& migrations();
int latestSchemaVersion();

// Runs every missing step up to `targetVersion` (default: the latest), each in
// its own transaction together with the user_version bump, so a crash leaves
// the database at a whole version. Returns the version it ended at.
int migrate(sql::Database& db, int targetVersion = -1);

}  // namespace cairn::store
