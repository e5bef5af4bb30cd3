// The hostile-template corpus (tests/chat/hostile/*.jinja): every template ends
// cleanly — it renders or fails with a cairn::Error — within a wall-time bound, with
// the budget's reported peak under its byte limit and the process far below 1 GiB,
// both through the library and through `cairn-cli template` (exit 0 or 1, no signal).
#include "cairn/chat_template.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>
#include <sstream>

using namespace cairn;

namespace {

// A hang detector, not a speed test: the step budget is what bounds a render
// (asserted through its stats below); ~1.5 s is the slowest seen on a loaded
// 2-core machine, and the sanitizer build or a busy CI runs several times slower.
constexpr qint64 kWallBoundMs = 60000;
constexpr uint64_t kRssBoundBytes = uint64_t(1) << 30;

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

QStringList corpus() {
    QDir dir(QStringLiteral(CAIRN_HOSTILE_DIR));
    QStringList files = dir.entryList({"*.jinja"}, QDir::Files, QDir::Name);
    for (auto& f : files) f = dir.filePath(f);
    return files;
}

// A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 when unavailable.
uint64_t procStatusBytes(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::strlen(field) + 1)) * 1024;
    return 0;
}

// What some members must end with: a substring of the error, or of the output.
struct Expectation {
    bool error;
    const char* text;
};
const std::map<std::string, Expectation> kExpected = {
    {"chain_plus", {true, "nested too deeply"}},
    {"chain_filter", {true, "nested too deeply"}},
    {"chain_attribute", {true, "nested too deeply"}},
    {"chain_else", {true, "nested too deeply"}},
    {"chain_not", {true, "nested too deeply"}},
    {"nested_parentheses", {true, "nested too deeply"}},
    {"nested_if_blocks", {true, "nested too deeply"}},
    {"chain_elif", {false, "ok"}},
    {"namespace_self_print", {false, "<Namespace {'a': 1, 'self': <Namespace {...}>}>"}},
    {"namespace_self_compare", {false, "TrueTrueTrueTrue"}},
    {"namespace_self_tojson", {true, "not JSON serializable"}},
    {"million_deep_list", {true, "memory budget"}},
    {"million_deep_list_print", {true, "depth limit"}},
    {"million_deep_list_compare", {true, "depth limit"}},
    {"million_deep_list_tojson", {true, "depth limit"}},
    {"nested_loops_2_40", {true, "step budget"}},
    {"nested_loops_2_40_empty_body", {true, "step budget"}},
    {"macro_recursion", {true, "recursion depth"}},
    {"unique_quadratic", {true, "step budget"}},
    {"dict_from_many_pairs", {true, "step budget"}},
    {"batch_fill_huge", {true, "memory budget"}},
    {"center_huge", {true, "memory budget"}},
    {"indent_many_lines", {true, "memory budget"}},
    {"replace_multiplies", {true, "memory budget"}},
    {"join_multiplies", {true, "memory budget"}},
    {"string_repeat_huge", {true, "memory budget"}},
    {"string_doubling", {true, "memory budget"}},
    {"list_doubling", {true, "memory budget"}},
    {"tojson_indent_huge", {true, "memory budget"}},
    {"output_multiplies", {true, "memory budget"}},
    {"repr_multiplies", {true, "memory budget"}},
    {"huge_string_iteration", {true, "memory budget"}},
    {"huge_string_in_loop", {true, "step budget"}},
    {"huge_string_compare_in_loop", {true, "step budget"}},
    {"slice_huge_step", {false, "[1]b[3]a[]3"}},
    {"slice_min_step", {false, "[3]c"}},
    {"range_huge_step",
     {false, "[0, 4611686018427387904][-9223372036854775808, -1, 9223372036854775806][9223372036854775807, -1]"}},
    {"range_huge_count", {true, "MAX_RANGE"}},
    {"int_overflow", {true, "integer overflow"}},
    {"undefined_with_huge_name", {false, "10000False"}},
};

}  // namespace

class TestChatHostile : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY2(corpus().size() >= 90, "the hostile corpus is missing"); }

    void everyTemplateEndsCleanly_data() {
        QTest::addColumn<QString>("path");
        for (const auto& f : corpus()) QTest::newRow(QFileInfo(f).baseName().toUtf8().constData()) << f;
    }
    void everyTemplateEndsCleanly() {
        QFETCH(QString, path);
        const std::string name = QFileInfo(path).baseName().toStdString();
        const std::string source = readFile(path);
        ChatRenderStats stats;
        ChatRenderOptions options;
        options.stats = &stats;
        options.addGenerationPrompt = true;
        std::string out, error;
        QElapsedTimer timer;
        timer.start();
        try {
            ChatTemplate t(source);
            out = t.render(std::vector<ChatMessage>{{"user", "hello"}}, options);
        } catch (const Error& e) {
            error = e.what();
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("not a cairn::Error: ") + e.what()));
        }
        const qint64 ms = timer.elapsed();
        std::printf("hostile %-36s %6lld ms  steps %9llu  peak %9llu B  depth %4u  %s\n", name.c_str(), (long long)ms,
                    (unsigned long long)stats.steps, (unsigned long long)stats.peakBytes, stats.peakDepth,
                    error.empty() ? ("rendered " + std::to_string(out.size()) + " bytes").c_str() : error.c_str());
        QVERIFY2(ms < kWallBoundMs, qPrintable(QString("took %1 ms").arg(ms)));
        QVERIFY(stats.peakBytes <= options.limits.maxBytes);
        // The step that crossed the limit raised: past it only with the step budget's error.
        if (stats.steps > options.limits.maxSteps)
            QVERIFY2(error.find("step budget") != std::string::npos, error.c_str());
        QVERIFY(stats.peakDepth <= options.limits.maxDepth);
        QVERIFY2(error.find('\n') == std::string::npos, "an error is one line");
        QVERIFY2(error.size() < 1000, "an error message is short");
        const uint64_t rss = procStatusBytes("VmRSS:");
        QVERIFY2(rss < kRssBoundBytes, qPrintable(QString("RSS %1 MiB").arg(rss >> 20)));
        auto it = kExpected.find(name);
        if (it != kExpected.end()) {
            if (it->second.error) {
                QVERIFY2(error.find(it->second.text) != std::string::npos, error.empty() ? "rendered" : error.c_str());
            } else {
                QVERIFY2(error.empty(), error.c_str());
                QCOMPARE(QString::fromStdString(out), QString::fromUtf8(it->second.text));
            }
        }
    }

    void peakMemoryOfTheWholeCorpus() {
        const uint64_t hwm = procStatusBytes("VmHWM:");
        std::printf("hostile corpus: process peak RSS %llu MiB\n", (unsigned long long)(hwm >> 20));
#if defined(__SANITIZE_ADDRESS__)
        // ASan keeps freed blocks in its quarantine and adds shadow memory, so
        // the process peak is the sanitizer's, not the renderer's (1026 MiB
        // here against 245 MiB in the release build); the per-template RSS
        // check above still applies.
        QSKIP("the process peak RSS is not the product's under AddressSanitizer");
#endif
        QVERIFY2(hwm < kRssBoundBytes, qPrintable(QString("peak RSS %1 MiB").arg(hwm >> 20)));
    }

    void cliEndsWithStatusZeroOrOne_data() { everyTemplateEndsCleanly_data(); }
    void cliEndsWithStatusZeroOrOne() {
        QFETCH(QString, path);
        const QString cli = QString::fromLocal8Bit(qgetenv("CAIRN_CLI"));
        QVERIFY2(!cli.isEmpty(), "CAIRN_CLI is not set");
        QTemporaryDir dir;
        const QString messages = dir.filePath("messages.json");
        {
            std::ofstream m(messages.toStdString());
            m << R"([{"role": "user", "content": "hello"}])";
        }
        QProcess p;
        QElapsedTimer timer;
        timer.start();
        p.start(cli, {"template", "--template", path, "--messages", messages, "--add-generation-prompt"});
        QVERIFY(p.waitForStarted());
        const bool finished = p.waitForFinished(int(2 * kWallBoundMs));
        if (!finished) p.kill();
        QVERIFY2(finished, "cairn-cli did not finish in time");
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(p.exitCode() == 0 || p.exitCode() == 1, qPrintable(QString("exit code %1").arg(p.exitCode())));
        if (p.exitCode() == 1) {
            const QByteArray err = p.readAllStandardError().trimmed();
            QVERIFY2(!err.isEmpty() && !err.contains('\n'), err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestChatHostile)
#include "test_chat_hostile.moc"
