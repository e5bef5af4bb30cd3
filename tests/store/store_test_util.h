// Helpers shared by the store tests.
#pragma once

#include "cairn/store/store.h"

#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace cairn::test {

// A database file in a fresh temporary folder, removed with the object.
class TempDb {
public:
    TempDb() { QVERIFY(dir_.isValid()); }
    std::string path(const char* name = "cairn.db") const { return dir_.filePath(name).toStdString(); }

private:
    QTemporaryDir dir_;
};

// A clock the test moves by hand (starts at a fixed date, ms since epoch).
struct ManualClock {
    std::shared_ptr<int64_t> ms = std::make_shared<int64_t>(1'780'000'000'000);
    std::function<int64_t()> fn() const {
        auto p = ms;
        return [p] { return *p; };
    }
    void advance(int64_t by) { *ms += by; }
};

inline store::StoreOptions optionsWith(const ManualClock& clock) {
    store::StoreOptions o;
    o.clock = clock.fn();
    return o;
}

// Every table (and virtual table) the schema defines, by name.
inline QStringList tableNames(sql::Database& db) {
    sql::Statement s(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    QStringList names;
    while (s.step()) names << QString::fromStdString(s.columnText(0));
    return names;
}

// FTS5's own check that the index matches the content table; throws if not.
inline void ftsIntegrityCheck(sql::Database& db) {
    db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
}

}  // namespace cairn::test
