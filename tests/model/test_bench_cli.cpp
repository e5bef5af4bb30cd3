// cairn-cli bench on a tiny model: the JSON report, -d (tests that start
// from a context already holding D tokens, like llama-bench -d), and the
// kernel calibration (--kernel-cache: measured once, then from the cache;
// not cached when measured on a busy machine).
#include "tiny_models.h"

#include "cairn/gguf.h"

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <vector>

using namespace cairn;
using nlohmann::json;

class TestBenchCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString cli_, model_;

    // Runs bench with `args`; the exit code, and stdout parsed when it is JSON.
    // The calibration sees `calibrationLoad` as the share of the CPU other
    // programs took (the real one depends on the tests running beside).
    std::pair<int, json> bench(const QStringList& args, QByteArray* err = nullptr, double calibrationLoad = 0) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("CAIRN_TEST_CALIBRATION_LOAD"), QString::number(calibrationLoad));
        p.setProcessEnvironment(env);
        p.start(cli_, QStringList{"bench", "-m", model_, "-t", "2", "-r", "1", "--json"} + args);
        if (!p.waitForFinished(120000)) return {-1, {}};
        if (err) *err = p.readAllStandardError();
        return {p.exitCode(), json::parse(p.readAllStandardOutput().toStdString(), nullptr, false)};
    }

private slots:
    void initTestCase() {
        cli_ = qEnvironmentVariable("CAIRN_CLI");
        if (cli_.isEmpty() || !QFileInfo(cli_).isExecutable()) QSKIP("needs cairn-cli (CAIRN_CLI)");
        test::TinyModelOptions t;
        t.type = TensorType::Q8_0;
        t.context = 1024;
        model_ = dir_.filePath("tiny.gguf");
        test::writeTinyModel(model_.toStdString(), t);
    }

    void reportsPromptAndGenerationAtADepth() {
        for (int depth : {0, 300}) {
            auto [code, j] = bench({"-p", "16", "-n", "8", "-d", QString::number(depth)});
            QCOMPARE(code, 0);
            QVERIFY(j.is_object());
            QCOMPARE(j["n_depth"].get<int>(), depth);
            QCOMPARE(j["n_prompt"].get<int>(), 16);
            QCOMPARE(j["n_gen"].get<int>(), 8);
            QVERIFY(j["pp_tps"].get<double>() > 0);
            QVERIFY(j["tg_tps"].get<double>() > 0);
        }
    }

    void reportsTheCalibratedPathPerRegime() {
        if (qEnvironmentVariableIsSet("CAIRN_KERNELS")) QSKIP("CAIRN_KERNELS overrides the calibration");
        const QString cache = dir_.filePath("kernels/calibration.json");
        auto [code, plain] = bench({"-p", "16", "-n", "2"});
        QCOMPARE(code, 0);
        QCOMPARE(plain["kernel_calibration"].get<std::string>(), std::string("default"));
        QVERIFY(!QFileInfo::exists(cache));
        for (const char* expected : {"measured", "cache"}) {
            QByteArray err;
            auto [c, j] = bench({"-p", "16", "-n", "2", "--kernel-cache", cache}, &err);
            QCOMPARE(c, 0);
            QCOMPARE(j["kernel_calibration"].get<std::string>(), std::string(expected));
            QVERIFY(QFileInfo::exists(cache));
            QVERIFY2(err.contains(expected == std::string("cache") ? "calibration from" : "calibrated in"),
                     err.constData());
            for (const char* regime : {"decode", "prefill"})
                for (const char* family : {"q4", "q8", "k", "float"})
                    QVERIFY(!j["kernel_choice"][regime][family].get<std::string>().empty());
        }
    }

    // Measured on a busy machine: used for the run, not cached.
    void aBusyCalibrationIsNotCached() {
        if (qEnvironmentVariableIsSet("CAIRN_KERNELS")) QSKIP("CAIRN_KERNELS overrides the calibration");
        const QString cache = dir_.filePath("kernels/busy.json");
        QByteArray err;
        auto [code, j] = bench({"-p", "16", "-n", "2", "--kernel-cache", cache}, &err, 0.7);
        QCOMPARE(code, 0);
        QCOMPARE(j["kernel_calibration"].get<std::string>(), std::string("measured"));
        QVERIFY2(err.contains("not cached: other programs took 70 % of the CPU"), err.constData());
        QVERIFY(!QFileInfo::exists(cache));
    }

    // --read-loop: the read loop's passes and decode's weight bytes a second;
    // the weight bytes a token are the file's tensors (the tiny model's output
    // is tied to its embedding table, so the table counts).
    void readLoopBesideDecode() {
        auto [code, j] = bench({"-p", "4", "-n", "4", "--read-loop", "16"});
        QCOMPARE(code, 0);
        QVERIFY(j["read_loop_gbs"].get<double>() >= j["read_loop_median_gbs"].get<double>());
        QVERIFY(j["read_loop_median_gbs"].get<double>() > 0);
        const auto file = gguf::File::open(model_.toStdString());
        double mb = 0;
        for (const auto& t : file.tensors()) mb += double(t.nbytes) / 1e6;
        QVERIFY(file.findTensor("output.weight") == nullptr);
        QCOMPARE(j["weights_per_token_mb"].get<double>(), mb);
        QCOMPARE(j["decode_gbs"].get<double>(), mb * j["tg_tps"].get<double>() / 1e3);
        auto [plainCode, plain] = bench({"-p", "4", "-n", "4"});
        QCOMPARE(plainCode, 0);
        QVERIFY(!plain.contains("read_loop_gbs"));
        QVERIFY(!plain.contains("decode_share_adjacent"));
    }

    // Each generation run's decode GB/s over the read loop right after it;
    // the share reported is the median of the runs' shares.
    void readLoopAfterEachRun() {
        QProcess p;  // bench() runs one repetition
        p.start(cli_, {"bench", "-m", model_, "-t", "2", "-r", "3", "-p", "4", "-n", "4", "--read-loop", "16", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const json j = json::parse(p.readAllStandardOutput().toStdString());
        const auto runs = j["tg_tps_runs"].get<std::vector<double>>();
        const auto reads = j["read_loop_adjacent_gbs"].get<std::vector<double>>();
        QCOMPARE(int(runs.size()), 3);
        QCOMPARE(int(reads.size()), 3);
        std::vector<double> shares, sortedRuns = runs;
        for (size_t r = 0; r < runs.size(); ++r) {
            QVERIFY(reads[r] > 0);
            shares.push_back(j["weights_per_token_mb"].get<double>() * runs[r] / 1e3 / reads[r]);
        }
        std::sort(shares.begin(), shares.end());
        std::sort(sortedRuns.begin(), sortedRuns.end());
        QCOMPARE(j["decode_share_adjacent"].get<double>(), shares[1]);
        QCOMPARE(j["tg_tps"].get<double>(), sortedRuns[1]);
        // Prefill only: no generation runs to set beside a read.
        auto [ppCode, pp] = bench({"-p", "4", "-n", "0", "--read-loop", "16"});
        QCOMPARE(ppCode, 0);
        QVERIFY(pp["read_loop_gbs"].get<double>() > 0);
        QVERIFY(!pp.contains("decode_share_adjacent"));
    }

    // Untied: the embedding table is read a row a token, so it does not count.
    void untiedEmbeddingTableIsNotStreamed() {
        test::TinyModelOptions t;
        t.type = TensorType::Q8_0;
        t.tied = false;
        const QString path = dir_.filePath("untied.gguf");
        test::writeTinyModel(path.toStdString(), t);
        QProcess p;
        p.start(cli_, {"bench", "-m", path, "-t", "1", "-r", "1", "-p", "4", "-n", "2", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const json j = json::parse(p.readAllStandardOutput().toStdString());
        const auto file = gguf::File::open(path.toStdString());
        double mb = 0;
        for (const auto& t : file.tensors())
            if (t.name != "token_embd.weight") mb += double(t.nbytes) / 1e6;
        QVERIFY(file.findTensor("output.weight") != nullptr);
        QCOMPARE(j["weights_per_token_mb"].get<double>(), mb);
    }

    // Without a model, --read-loop measures the memory alone (-r passes, at
    // least 3); without either, bench says what it needs.
    void memoryAloneWithoutAModel() {
        auto run = [&](const QStringList& args, QByteArray* err = nullptr) {
            QProcess p;
            p.start(cli_, QStringList{"bench"} + args);
            p.waitForFinished(120000);
            if (err) *err = p.readAllStandardError();
            return std::pair{p.exitCode(), p.readAllStandardOutput()};
        };
        auto [code, out] = run({"--read-loop", "16", "-t", "2", "-r", "4", "--json"});
        QCOMPARE(code, 0);
        const json j = json::parse(out.toStdString());
        QCOMPARE(j["passes"].get<int>(), 4);
        QCOMPARE(j["threads"].get<int>(), 2);
        QCOMPARE(j["read_loop_mib"].get<double>(), 16.0);
        QVERIFY(j["read_loop_gbs"].get<double>() >= j["read_loop_median_gbs"].get<double>());
        QVERIFY(j["read_loop_median_gbs"].get<double>() > 0);
        QVERIFY(!j.contains("model") && !j.contains("tg_tps"));
        auto [textCode, text] = run({"--read-loop", "16", "-t", "1", "-r", "1"});
        QCOMPARE(textCode, 0);
        QVERIFY2(text.startsWith("read loop (16 MiB, 1 threads, 3 passes): best "), text.constData());
        QByteArray err;
        auto [noneCode, none] = run({"-t", "2"}, &err);
        QVERIFY(noneCode != 0);
        QVERIFY2(err.startsWith("cairn-cli bench: ") && err.contains("needs -m MODEL"), err.constData());
    }

    void aReadLoopOutOfRangeIsRefused() {
        for (const char* mib : {"-1", "100000000", "nan"}) {
            QByteArray err;
            auto [code, j] = bench({"--read-loop", mib}, &err);
            QVERIFY(code != 0);
            QVERIFY2(err.contains("--read-loop"), err.constData());
        }
    }

    // One line that names the command once (bench's own errors name it too).
    void aNegativeDepthIsRefused() {
        QByteArray err;
        auto [code, j] = bench({"-d", "-5"}, &err);
        QVERIFY(code != 0);
        QVERIFY2(err.contains("-d"), err.constData());
        QVERIFY2(err.startsWith("cairn-cli bench: ") && err.count("cairn-cli bench") == 1, err.constData());
        QCOMPARE(err.count('\n'), 1);
    }
};

QTEST_GUILESS_MAIN(TestBenchCli)
#include "test_bench_cli.moc"
