// The Debian package, end to end: cpack builds the .deb from this build tree,
// dpkg-deb unpacks it into a temporary root, and the unpacked files are
// checked: the file list, Depends (runtime packages only, each one justified),
// the desktop file and the AppStream metainfo (their validators), and the
// unpacked binaries themselves, which must find their bundled model and QML
// relative to their own location (no LD_LIBRARY_PATH, no QML import path).
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString appId = QStringLiteral(CAIRN_APP_ID);

struct Run {
    int exitCode = -1;
    QString out, err;
};

// Runs `program args` with `env` and returns its exit code and output;
// exitCode -1 when it could not start or did not finish in `timeoutMs`.
Run run(const QString& program, const QStringList& args, int timeoutMs = 60000,
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForStarted(10000)) {
        r.err = program + QStringLiteral(": ") + p.errorString();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err =
            program + QStringLiteral(": did not finish in time\n") + QString::fromLocal8Bit(p.readAllStandardError());
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(p.readAllStandardError());
    return r;
}

QString describe(const Run& r) { return QStringLiteral("exit %1\n%2%3").arg(r.exitCode).arg(r.out, r.err); }

QStringList filesUnder(const QString& root) {
    QStringList files;
    QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) files << QDir(root).relativeFilePath(it.next());
    files.sort();
    return files;
}

}  // namespace

class TestPackaging : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString deb_;  // the package cpack wrote
    QString root_;  // where it is unpacked
    QString share_;  // root_/usr/share/<app id>
    QSet<QString> depends_;  // package names in Depends

    QString tool(const char* name, const char* debianPackage) {
        QString path = QStandardPaths::findExecutable(QString::fromLatin1(name));
        if (path.isEmpty())
            qWarning("%s not found: install the Debian package %s (tools/dev.sh installs it)", name, debianPackage);
        return path;
    }

    // The unpacked binaries run without any help from the environment.
    QProcessEnvironment bareEnvironment() const {
        auto env = QProcessEnvironment::systemEnvironment();
        for (const char* v : {"LD_LIBRARY_PATH", "QML_IMPORT_PATH", "QML2_IMPORT_PATH", "QT_PLUGIN_PATH"})
            env.remove(QString::fromLatin1(v));
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        return env;
    }

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        const QString cpack = QStringLiteral(CAIRN_CPACK_COMMAND);
        const QString out = tmp_.filePath(QStringLiteral("out"));
        Run r = run(cpack,
                    {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("--config"),
                     QStringLiteral(CAIRN_BINARY_DIR "/CPackConfig.cmake"), QStringLiteral("-B"), out},
                    240000);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("cpack failed: ") + describe(r)));
        const QStringList debs = QDir(out).entryList({QStringLiteral("cairn_" CAIRN_VERSION "_*.deb")}, QDir::Files);
        QVERIFY2(debs.size() == 1,
                 qPrintable(QStringLiteral("expected one cairn_" CAIRN_VERSION "_*.deb in ") + out +
                            QStringLiteral(", found: ") + debs.join(QLatin1Char(' '))));
        deb_ = QDir(out).filePath(debs.first());
        qInfo("package: %s (%lld bytes)", qPrintable(debs.first()), QFileInfo(deb_).size());

        const QString dpkgDeb = tool("dpkg-deb", "dpkg");
        QVERIFY(!dpkgDeb.isEmpty());
        root_ = tmp_.filePath(QStringLiteral("root"));
        r = run(dpkgDeb, {QStringLiteral("-x"), deb_, root_});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        share_ = root_ + QStringLiteral("/usr/share/") + appId;
    }

    void fileList() {
        QStringList expected = {
            QStringLiteral("usr/bin/cairn"),
            QStringLiteral("usr/bin/cairn-cli"),
            QStringLiteral("usr/share/applications/%1.desktop").arg(appId),
            QStringLiteral("usr/share/metainfo/%1.metainfo.xml").arg(appId),
            QStringLiteral("usr/share/icons/hicolor/scalable/apps/%1.svg").arg(appId),
        };
        for (const char* size : {"48x48", "128x128", "256x256"})
            expected << QStringLiteral("usr/share/icons/hicolor/%1/apps/%2.png").arg(QLatin1String(size), appId);
        const QDir models(QStringLiteral(CAIRN_SOURCE_DIR "/resources/models"));
        const QStringList ggufs = models.entryList({QStringLiteral("*.gguf")}, QDir::Files);
        QVERIFY2(!ggufs.isEmpty(), "no bundled model in resources/models");
        for (const auto& m : ggufs) expected << QStringLiteral("usr/share/%1/models/%2").arg(appId, m);
        expected.sort();
        QCOMPARE(filesUnder(root_), expected);

        for (const auto& m : ggufs)
            QCOMPARE(QFileInfo(share_ + QStringLiteral("/models/") + m).size(), QFileInfo(models.filePath(m)).size());
        for (const char* bin : {"cairn", "cairn-cli"})
            QVERIFY(QFileInfo(root_ + QStringLiteral("/usr/bin/") + QLatin1String(bin)).isExecutable());
        for (const char* size : {"48", "128", "256"}) {
            QImage icon(root_ +
                        QStringLiteral("/usr/share/icons/hicolor/%1x%1/apps/%2.png").arg(QLatin1String(size), appId));
            QCOMPARE(icon.size(), QSize(QString::fromLatin1(size).toInt(), QString::fromLatin1(size).toInt()));
        }
    }

    void controlFields() {
        const QString dpkgDeb = tool("dpkg-deb", "dpkg");
        Run r = run(dpkgDeb, {QStringLiteral("-f"), deb_, QStringLiteral("Package"), QStringLiteral("Version")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QStringLiteral("Package: cairn\n")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("Version: " CAIRN_VERSION "\n")), qPrintable(r.out));
    }

    // Depends: runtime packages only; every one either owns a library the
    // binaries link or is a QML module the UI imports; and the libraries of
    // the engine and the app are all there.
    void depends() {
        Run r = run(tool("dpkg-deb", "dpkg"), {QStringLiteral("-f"), deb_, QStringLiteral("Depends")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const QString depends = r.out.trimmed();
        qInfo("Depends: %s", qPrintable(depends));
        QSet<QString> names;
        for (const auto& alternatives : depends.split(QLatin1Char(','), Qt::SkipEmptyParts))
            for (const auto& dep : alternatives.split(QLatin1Char('|'), Qt::SkipEmptyParts))
                names << dep.trimmed().section(QLatin1Char(' '), 0, 0);
        for (const auto& n : names) QVERIFY2(!n.endsWith(QLatin1String("-dev")), qPrintable(n));
        depends_ = names;

        // Packages owning the shared libraries the two binaries need.
        const QString objdump = tool("objdump", "binutils");
        QVERIFY(!objdump.isEmpty());
        r = run(objdump,
                {QStringLiteral("-p"), root_ + QStringLiteral("/usr/bin/cairn"),
                 root_ + QStringLiteral("/usr/bin/cairn-cli")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QStringList patterns;
        static const QRegularExpression needed(QStringLiteral("^\\s*NEEDED\\s+(\\S+)$"),
                                               QRegularExpression::MultilineOption);
        for (auto it = needed.globalMatch(r.out); it.hasNext();) {
            QString p = QStringLiteral("*/") + it.next().captured(1);
            if (!patterns.contains(p)) patterns << p;
        }
        QVERIFY(!patterns.isEmpty());
        r = run(tool("dpkg-query", "dpkg"), QStringList{QStringLiteral("-S")} + patterns);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        // soname -> the packages owning a file of that name (libc6 and libc6-i386 may both).
        QHash<QString, QSet<QString>> owners;
        for (const auto& line : r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QString soname = line.section(QStringLiteral(": "), 1).section(QLatin1Char('/'), -1);
            for (const auto& pkg : line.section(QStringLiteral(": "), 0, 0).split(QStringLiteral(", ")))
                owners[soname] << pkg.section(QLatin1Char(':'), 0, 0).trimmed();
        }
        QSet<QString> libraryPackages;
        for (auto it = owners.cbegin(); it != owners.cend(); ++it) {
            QVERIFY2(it.value().intersects(names), qPrintable(QStringLiteral("no dependency provides ") + it.key()));
            libraryPackages.unite(it.value());
        }
        const QStringList qmlModules = QStringLiteral(CAIRN_QML_RUNTIME_PACKAGES).split(QLatin1Char(','));
        for (const auto& n : names)
            QVERIFY2(libraryPackages.contains(n) || qmlModules.contains(n),
                     qPrintable(n + QStringLiteral(" is neither a linked library's package nor a QML module")));
        for (const auto& n : qmlModules) QVERIFY2(names.contains(n), qPrintable(n + QStringLiteral(" missing")));
        for (const char* lib : {"libqt6quick6", "libqt6qml6", "libqt6quickcontrols2-6", "libsqlite3-0",
                                "libsentencepiece0", "libpcre2-8-0", "libxxhash0"})
            QVERIFY2(names.contains(QLatin1String(lib)), lib);
    }

    void desktopFile() {
        const QString validator = tool("desktop-file-validate", "desktop-file-utils");
        QVERIFY(!validator.isEmpty());
        const QString file = root_ + QStringLiteral("/usr/share/applications/%1.desktop").arg(appId);
        Run r = run(validator, {file});
        qInfo("desktop-file-validate: exit %d%s", r.exitCode,
              qPrintable(r.out.isEmpty() ? QString() : QStringLiteral("\n") + r.out));
        QVERIFY2(r.exitCode == 0 && r.out.trimmed().isEmpty() && r.err.trimmed().isEmpty(), qPrintable(describe(r)));
        QSettings entry(file, QSettings::IniFormat);
        QCOMPARE(entry.value(QStringLiteral("Desktop Entry/Icon")).toString(), appId);
        QCOMPARE(entry.value(QStringLiteral("Desktop Entry/Exec")).toString().section(QLatin1Char(' '), 0, 0),
                 QStringLiteral("cairn"));
    }

    void metainfo() {
        const QString validator = tool("appstreamcli", "appstream");
        QVERIFY(!validator.isEmpty());
        const QString file = root_ + QStringLiteral("/usr/share/metainfo/%1.metainfo.xml").arg(appId);
        Run r = run(validator,
                    {QStringLiteral("validate"), QStringLiteral("--no-net"), QStringLiteral("--pedantic"), file});
        qInfo("appstreamcli validate --no-net --pedantic: exit %d\n%s", r.exitCode, qPrintable(r.out.trimmed()));
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));

        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString xml = QString::fromUtf8(f.readAll());
        QVERIFY(xml.contains(QStringLiteral("<id>%1</id>").arg(appId)));
        QVERIFY(xml.contains(QStringLiteral("<launchable type=\"desktop-id\">%1.desktop</launchable>").arg(appId)));
        // The newest release (listed first) is this version, with notes.
        static const QRegularExpression release(QStringLiteral("<release version=\"([^\"]+)\"[^>]*>\\s*<description>"));
        const auto m = release.match(xml);
        QVERIFY2(m.hasMatch(), "no <release> with a <description>");
        QCOMPARE(m.captured(1), QStringLiteral(CAIRN_VERSION));
        // Every screenshot is one of docs/screenshots, and every one is listed.
        static const QRegularExpression image(QStringLiteral("<image>[^<]*/docs/screenshots/([^<]+)</image>"));
        QStringList listed;
        for (auto it = image.globalMatch(xml); it.hasNext();) listed << it.next().captured(1);
        listed.sort();
        QCOMPARE(listed,
                 QDir(QStringLiteral(CAIRN_SOURCE_DIR "/docs/screenshots"))
                     .entryList({QStringLiteral("*.png")}, QDir::Files, QDir::Name));
    }

    void version() {
        Run r = run(root_ + QStringLiteral("/usr/bin/cairn"), {QStringLiteral("--version")}, 30000, bareEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QStringLiteral(CAIRN_VERSION)), qPrintable(r.out));

        // --help names the user data locations and the bundled models next to the binary.
        r = run(root_ + QStringLiteral("/usr/bin/cairn"), {QStringLiteral("--help")}, 30000, bareEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        for (const char* what : {"conversations", "models folder", "settings"})
            QVERIFY2(r.out.contains(QLatin1String(what)), qPrintable(r.out));
        QVERIFY2(r.out.contains(QFileInfo(share_ + QStringLiteral("/models")).canonicalFilePath()), qPrintable(r.out));
    }

    void cliInspectsBundledModel() {
        const QStringList ggufs =
            QDir(share_ + QStringLiteral("/models")).entryList({QStringLiteral("*.gguf")}, QDir::Files);
        QVERIFY(!ggufs.isEmpty());
        Run r = run(root_ + QStringLiteral("/usr/bin/cairn-cli"),
                    {QStringLiteral("inspect"), share_ + QStringLiteral("/models/") + ggufs.first()}, 30000,
                    bareEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(!r.out.trimmed().isEmpty(), "inspect printed nothing");
    }

    // An offscreen start with a fresh data folder: the app picks the bundled
    // model by itself, loads it, renders the window and saves it.
    void screenshotStart() {
        const QString data = tmp_.filePath(QStringLiteral("data"));
        const QString shot = tmp_.filePath(QStringLiteral("shot.png"));
        auto env = bareEnvironment();
        env.insert(QStringLiteral("QML_IMPORT_TRACE"), QStringLiteral("1"));
        Run r = run(root_ + QStringLiteral("/usr/bin/cairn"),
                    {QStringLiteral("--screenshot"), shot, QStringLiteral("--data-dir"), data, QStringLiteral("--size"),
                     QStringLiteral("800x500")},
                    90000, env);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QImage image(shot);
        QVERIFY2(!image.isNull(), qPrintable(shot));
        QVERIFY(image.width() > 0 && image.height() > 0);

        QSettings settings(data + QStringLiteral("/settings.ini"), QSettings::IniFormat);
        const QString loaded = settings.value(QStringLiteral("models/last")).toString();
        QVERIFY2(QFileInfo(loaded).canonicalPath() == QFileInfo(share_ + QStringLiteral("/models")).canonicalFilePath(),
                 qPrintable(QStringLiteral("loaded model: '") + loaded + QLatin1Char('\'')));

        // Every QML module the start loaded from the system comes from a package in Depends.
        QStringList qmldirs;
        static const QRegularExpression qmldir(QStringLiteral("(/\\S*/qml/\\S*/qmldir)"));
        for (auto it = qmldir.globalMatch(r.err); it.hasNext();) {
            const QString path = it.next().captured(1).remove(QLatin1Char('"'));
            if (!qmldirs.contains(path)) qmldirs << path;
        }
        QVERIFY2(!qmldirs.isEmpty(), "QML_IMPORT_TRACE named no qmldir");
        if (depends_.isEmpty()) QSKIP("depends() did not run");
        r = run(tool("dpkg-query", "dpkg"), QStringList{QStringLiteral("-S")} + qmldirs);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        for (const auto& line : r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QString pkg = line.section(QStringLiteral(": "), 0, 0).section(QLatin1Char(':'), 0, 0);
            QVERIFY2(depends_.contains(pkg), qPrintable(line + QStringLiteral(": not in Depends")));
        }
    }
};

QTEST_GUILESS_MAIN(TestPackaging)
#include "test_packaging.moc"
