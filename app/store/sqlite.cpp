#include "cairn/store/sqlite.h"

#include "cairn/error.h"

#include <sqlite3.h>

#include <utility>

namespace cairn::sql {
namespace {

const char* kWhere = "store";

[[noreturn]] void fail(sqlite3* db, int rc, std::string_view action, std::string_view sql) {
    std::string what = std::string(action) + " failed: ";
    what += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (!sql.empty()) {
        what += " [SQL: ";
        what += sql;
        what += "]";
    }
    throw Error(kWhere, what);
}

}  // namespace

// ---------------------------------------------------------------- Database

Database Database::open(const std::string& path, const OpenOptions& options) {
    int flags = SQLITE_OPEN_NOMUTEX;  // one connection per thread, see header
    if (options.readOnly) {
        flags |= SQLITE_OPEN_READONLY;
    } else {
        flags |= SQLITE_OPEN_READWRITE;
        if (options.create) flags |= SQLITE_OPEN_CREATE;
    }
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        sqlite3_close_v2(raw);
        throw Error(kWhere, "cannot open database " + path + ": " + msg);
    }
    Database db(raw, path);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, options.busyTimeoutMs);
    db.exec("PRAGMA foreign_keys = ON");
    if (!options.readOnly) {
        Statement wal(db, "PRAGMA journal_mode = WAL");
        // An in-memory database answers "memory"; any file must really switch.
        if (wal.step() && path != ":memory:" && wal.columnText(0) != "wal")
            throw Error(kWhere, "cannot switch " + path + " to WAL mode");
    }
    db.exec(options.synchronous == Synchronous::Full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    // A large snapshot passes through the WAL; truncate the WAL back to this
    // size after each checkpoint instead of keeping it at its largest.
    if (!options.readOnly) db.exec("PRAGMA journal_size_limit = 67108864");
    return db;
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(std::string_view sql) {
    std::string text(sql);
    char* err = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw Error(kWhere, "exec failed: " + msg + " [SQL: " + text + "]");
    }
}

int64_t Database::lastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
int64_t Database::changes() const { return sqlite3_changes64(db_); }
bool Database::inTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

int Database::userVersion() {
    Statement s(*this, "PRAGMA user_version");
    s.step();
    return static_cast<int>(s.columnInt64(0));
}

void Database::setUserVersion(int version) {
    // PRAGMA takes no parameters; the value is our own integer, never user data.
    exec("PRAGMA user_version = " + std::to_string(version));
}

std::string Database::integrityCheck() {
    Statement s(*this, "PRAGMA integrity_check");
    return s.step() ? s.columnText(0) : std::string("no result");
}

// ---------------------------------------------------------------- Statement

Statement::Statement(Database& db, std::string_view sql) : db_(db.handle()), sql_(sql) {
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql_.data(), static_cast<int>(sql_.size()), 0, &stmt_, &tail);
    if (rc != SQLITE_OK) fail(db_, rc, "prepare", sql_);
    if (!stmt_) throw Error(kWhere, "prepare failed: empty SQL");
    if (tail && *tail) {
        std::string_view rest(tail);
        if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
            sqlite3_finalize(stmt_);
            stmt_ = nullptr;
            throw Error(kWhere, "prepare failed: more than one statement [SQL: " + sql_ + "]");
        }
    }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), sql_(std::move(other.sql_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        db_ = other.db_;
        stmt_ = std::exchange(other.stmt_, nullptr);
        sql_ = std::move(other.sql_);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check(int rc, const char* action) const {
    if (rc != SQLITE_OK) fail(db_, rc, action, sql_);
}

int Statement::indexOf(Param p) const {
    if (!p.name()) {
        if (p.index() < 1 || p.index() > sqlite3_bind_parameter_count(stmt_))
            throw Error(kWhere, "bind failed: no parameter " + std::to_string(p.index()) + " [SQL: " + sql_ + "]");
        return p.index();
    }
    int i = sqlite3_bind_parameter_index(stmt_, p.name());
    if (i == 0) throw Error(kWhere, std::string("bind failed: no parameter ") + p.name() + " [SQL: " + sql_ + "]");
    return i;
}

Statement& Statement::bindInt64(Param p, int64_t value) {
    check(sqlite3_bind_int64(stmt_, indexOf(p), value), "bind");
    return *this;
}

Statement& Statement::bind(Param p, double value) {
    check(sqlite3_bind_double(stmt_, indexOf(p), value), "bind");
    return *this;
}

Statement& Statement::bind(Param p, std::string_view text) {
    // A non-null pointer even for "", so an empty string binds as '' and not NULL.
    const char* data = text.data() ? text.data() : "";
    check(sqlite3_bind_text64(stmt_, indexOf(p), data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), "bind");
    return *this;
}

Statement& Statement::bind(Param p, Blob blob) {
    static const uint8_t empty = 0;
    const void* data = blob.data ? blob.data : &empty;
    check(sqlite3_bind_blob64(stmt_, indexOf(p), data, blob.size, SQLITE_STATIC), "bind");
    return *this;
}

Statement& Statement::bind(Param p, std::nullptr_t) {
    check(sqlite3_bind_null(stmt_, indexOf(p)), "bind");
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    std::string msg = sqlite3_errmsg(db_);
    sqlite3_reset(stmt_);  // leave the statement reusable
    throw Error(kWhere, "step failed: " + msg + " [SQL: " + sql_ + "]");
}

void Statement::run() {
    while (step()) {}
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int Statement::columnCount() const { return sqlite3_column_count(stmt_); }
bool Statement::isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::columnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::columnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::columnText(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    int n = sqlite3_column_bytes(stmt_, col);
    return p ? std::string(p, static_cast<size_t>(n)) : std::string();
}

std::vector<uint8_t> Statement::columnBlob(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, col));
    int n = sqlite3_column_bytes(stmt_, col);
    return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>();
}

std::optional<int64_t> Statement::columnOptInt64(int col) const {
    if (isNull(col)) return std::nullopt;
    return columnInt64(col);
}

// ---------------------------------------------------------------- Transaction

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (!done_ && db_.inTransaction()) {
        // Never throws from a destructor; a failed ROLLBACK leaves SQLite to roll
        // back when the connection closes.
        sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    done_ = true;
}

}  // namespace cairn::sql
