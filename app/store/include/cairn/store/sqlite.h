// A small RAII layer over the SQLite C API: Database, Statement, Transaction.
// Every failure becomes a cairn::Error naming the SQLite message and the SQL
// (our SQL is constant text; user data only ever travels as bound parameters).
//
// Threads: a Database is one connection and must only be used by one thread
// at a time (it is opened with SQLITE_OPEN_NOMUTEX). Open one per thread; WAL
// lets readers on other connections run while one connection writes.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace cairn::sql {

// How hard a commit waits for the disk (PRAGMA synchronous in WAL mode).
//  Normal: a commit survives a crash of the process, may be lost on power loss.
//  Full:   a commit is on disk (fsync of the WAL) before commit returns.
enum class Synchronous { Normal, Full };

struct OpenOptions {
    bool readOnly = false;
    bool create = true;  // create the file when missing (ignored when readOnly)
    int busyTimeoutMs = 5000;  // wait this long for another connection's write lock
    Synchronous synchronous = Synchronous::Full;
};

class Statement;

class Database {
public:
    // Opens `path` (":memory:" works), then sets WAL mode, foreign_keys=ON,
    // busy_timeout and synchronous.
    static Database open(const std::string& path, const OpenOptions& options = {});

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs constant SQL (one or more statements, no parameters).
    void exec(std::string_view sql);

    int64_t lastInsertRowid() const;
    int64_t changes() const;  // rows changed by the last statement
    bool inTransaction() const;

    int userVersion();
    void setUserVersion(int version);

    // The first column of the first row of PRAGMA integrity_check ("ok" when sound).
    std::string integrityCheck();

    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }

private:
    Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_ = nullptr;
    std::string path_;
};

// A parameter by 1-based index or by name (":name", "@name", "$name").
class Param {
public:
    Param(int index) : index_(index) {}
    Param(const char* name) : name_(name) {}
    int index() const { return index_; }
    const char* name() const { return name_; }

private:
    int index_ = 0;
    const char* name_ = nullptr;
};

// Bytes bound without a copy: they must stay alive until the statement is
// stepped to completion or reset.
struct Blob {
    const void* data = nullptr;
    size_t size = 0;
    Blob() = default;
    Blob(const void* d, size_t n) : data(d), size(n) {}
    Blob(std::span<const uint8_t> bytes) : data(bytes.data()), size(bytes.size()) {}
};

class Statement {
public:
    Statement(Database& db, std::string_view sql);
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    template <std::integral T>
    Statement& bind(Param p, T value) {
        return bindInt64(p, static_cast<int64_t>(value));
    }
    Statement& bindInt64(Param p, int64_t value);
    Statement& bind(Param p, double value);
    Statement& bind(Param p, std::string_view text);
    Statement& bind(Param p, const std::string& text) { return bind(p, std::string_view(text)); }
    Statement& bind(Param p, const char* text) { return bind(p, std::string_view(text)); }
    Statement& bind(Param p, Blob blob);
    Statement& bind(Param p, std::nullptr_t);
    template <class T>
    Statement& bind(Param p, const std::optional<T>& value) {
        return value ? bind(p, *value) : bind(p, nullptr);
    }

    // Advances; true when a row is available, false when done.
    bool step();
    // Steps a statement that returns no rows (INSERT/UPDATE/DELETE) to completion.
    void run();
    // Resets to run again and clears the bindings.
    void reset();

    int columnCount() const;
    bool isNull(int col) const;
    int64_t columnInt64(int col) const;
    double columnDouble(int col) const;
    std::string columnText(int col) const;
    std::vector<uint8_t> columnBlob(int col) const;
    std::optional<int64_t> columnOptInt64(int col) const;

    const std::string& sql() const { return sql_; }

private:
    int indexOf(Param p) const;
    void check(int rc, const char* action) const;

    sqlite3* db_ = nullptr;
    sqlite3_stmt* stmt_ = nullptr;
    std::string sql_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so two
// writers wait on busy_timeout instead of deadlocking); ROLLBACK on
// destruction unless commit() ran.
class Transaction {
public:
    explicit Transaction(Database& db);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    void commit();

private:
    Database& db_;
    bool done_ = false;
};

}  // namespace cairn::sql
