// The shared UTF-8 codec on invalid input: overlongs, surrogates, values past
// U+10FFFF, stray and missing continuation bytes are each one U+FFFD per byte,
// the same in every function (decode, length, replacement, safe prefix).
#include "cairn/utf8.h"

#include <QTest>

#include <algorithm>
#include <string>

using namespace cairn::text;

namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

}  // namespace

class TestUtf8 : public QObject {
    Q_OBJECT
private slots:
    void invalidSequences_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("replaced");  // U+FFFD in the output, one per invalid byte
        QTest::newRow("overlong NUL") << QByteArray("\xC0\x80", 2) << 2;
        QTest::newRow("overlong '<'") << QByteArray("\xC0\xBC") << 2;
        QTest::newRow("overlong 3-byte") << QByteArray("\xE0\x80\xAF") << 3;
        QTest::newRow("overlong 4-byte") << QByteArray("\xF0\x80\x80\xAF") << 4;
        QTest::newRow("surrogate") << QByteArray("\xED\xA0\x80") << 3;
        QTest::newRow("past U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << 4;
        QTest::newRow("lead F5") << QByteArray("\xF5\x80\x80\x80") << 4;
        QTest::newRow("stray continuation") << QByteArray("\x80") << 1;
        QTest::newRow("cut at the end") << QByteArray("\xE2\x82") << 2;
        QTest::newRow("cut before ASCII") << QByteArray("\xE2\x82"
                                                        "a")
                                          << 2;
        QTest::newRow("FF") << QByteArray("\xFF") << 1;
    }
    void invalidSequences() {
        QFETCH(QByteArray, bytes);
        QFETCH(int, replaced);
        const std::string s = bytes.toStdString();
        size_t ascii = 0;
        for (unsigned char c : s) ascii += c < 0x80;
        std::u32string cps = codePoints(s);
        QCOMPARE(cps.size(), size_t(replaced) + ascii);
        QCOMPARE(utf8Length(s), cps.size());
        QCOMPARE(size_t(std::count(cps.begin(), cps.end(), U'\uFFFD')), size_t(replaced));
        std::string expected;
        for (char32_t c : cps) appendUtf8(expected, uint32_t(c));
        QCOMPARE(validUtf8(s), expected);
        std::string out;
        QVERIFY(replaceInvalidUtf8(s, out));
        QCOMPARE(out, expected);
        QVERIFY(!isValidUtf8(s));
        size_t pos = 0;
        QCOMPARE(decodeUtf8(s, pos), -1);
        QCOMPARE(pos, size_t(0));
    }

    void wellFormedTextIsUnchanged() {
        const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF";  // a é € 😀 U+10FFFF
        std::string out;
        QVERIFY(!replaceInvalidUtf8(s, out));
        QVERIFY(isValidUtf8(s));
        QVERIFY(isValidUtf8(""));
        QCOMPARE(validUtf8(s), s);
        QCOMPARE(codePoints(s), std::u32string(U"a\u00E9\u20AC\U0001F600\U0010FFFF"));
        QCOMPARE(utf8Length(s), size_t(5));
        std::string back;
        for (char32_t c : codePoints(s)) appendUtf8(back, uint32_t(c));
        QCOMPARE(back, s);
    }

    // A cut character is held back only while it can still become one.
    void safePrefix() {
        QCOMPARE(utf8SafePrefix("ab\xE2\x82"), size_t(2));
        QCOMPARE(utf8SafePrefix("ab\xE2\x82\xAC"), size_t(5));
        QCOMPARE(utf8SafePrefix("ab\xED\xA0"), size_t(4));  // a surrogate never completes
        QCOMPARE(utf8SafePrefix("ab\xC0"), size_t(3));  // C0 never starts a character
    }
};

QTEST_APPLESS_MAIN(TestUtf8)
#include "test_utf8.moc"
