// Runs the built cairn-cli (path in CAIRN_CLI, set by cairn_add_test).
#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QProcess>
#include <QStringList>

namespace cairn::test {

struct CliResult {
    int status = -1;  // exit code, -1 for a crash or timeout
    QByteArray out, err;
};

inline CliResult runCli(const QStringList& args) {
    // QProcess wants an application object; conformance mains do not make
    // one. It lives until exit and is never destroyed (destroying it among the
    // static destructors crashes).
    if (!QCoreApplication::instance()) {
        static int argc = 1;
        static char name[] = "test";
        static char* argv[] = {name, nullptr};
        static QCoreApplication* app = new QCoreApplication(argc, argv);
        (void)app;
    }
    QProcess p;
    p.start(QString::fromLocal8Bit(qgetenv("CAIRN_CLI")), args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, "timeout"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

}  // namespace cairn::test
