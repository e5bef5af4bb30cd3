// The memory decode's weights and every timed weight stream live in: zeroed,
// writable, moved without a copy, and hinted for huge pages.
#include "tensor/huge_page_buffer.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

using cairn::tensor::HugePageBuffer;

namespace {
// The VmFlags line of the mapping that starts at `p` in /proc/self/smaps.
std::string vmFlagsOf(const void* p) {
    QFile smaps("/proc/self/smaps");
    if (!smaps.open(QIODevice::ReadOnly)) return {};
    const std::string start = QByteArray::number(quint64(reinterpret_cast<uintptr_t>(p)), 16).toStdString() + "-";
    bool inside = false;
    for (const QByteArray& raw : smaps.readAll().split('\n')) {
        const std::string line = raw.toStdString();
        if (line.rfind(start, 0) == 0) inside = true;
        else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
    }
    return {};
}
}  // namespace

class TestHugePageBuffer : public QObject {
    Q_OBJECT
private slots:
    void holdsZeroedWritableMemory() {
        const size_t bytes = (size_t(3) << 20) + 5;  // not a whole number of pages
        HugePageBuffer b(bytes);
        QVERIFY(b);
        QCOMPARE(b.size(), bytes);
        QVERIFY(std::all_of(b.data(), b.data() + bytes, [](uint8_t v) { return v == 0; }));
        std::memset(b.data(), 0xA5, bytes);
        QCOMPARE(int(b.data()[bytes - 1]), 0xA5);
    }

    void emptyWithoutBytes() {
        QVERIFY(!HugePageBuffer());
        QVERIFY(!HugePageBuffer(0));
        QCOMPARE(HugePageBuffer(0).size(), size_t(0));
    }

    void movesOwnership() {
        HugePageBuffer a(4096);
        a.data()[7] = 42;
        uint8_t* where = a.data();
        HugePageBuffer b(std::move(a));
        QVERIFY(!a);
        QCOMPARE(b.data(), where);
        QCOMPARE(int(b.data()[7]), 42);
        HugePageBuffer c(64);
        c = std::move(b);
        QVERIFY(!b);
        QCOMPARE(c.data(), where);
        QCOMPARE(c.size(), size_t(4096));
    }

    // Only whole aligned 2 MiB can be huge pages: a large buffer starts on
    // that boundary (and a small one on a page), and all of it is usable.
    void largeBuffersStartOnAHugePage() {
        for (const size_t bytes : {HugePageBuffer::kHugePageBytes, (size_t(5) << 20) + 123, size_t(64) << 20}) {
            HugePageBuffer b(bytes);
            QVERIFY(b);
            QCOMPARE(reinterpret_cast<uintptr_t>(b.data()) % HugePageBuffer::kHugePageBytes, uintptr_t(0));
            std::memset(b.data(), 0x5A, bytes);
            QCOMPARE(int(b.data()[bytes - 1]), 0x5A);
        }
        HugePageBuffer small(5000);
        QCOMPARE(reinterpret_cast<uintptr_t>(small.data()) % 4096, uintptr_t(0));
    }

    // MADV_HUGEPAGE shows as "hg" among the mapping's VmFlags.
    void asksForHugePages() {
        if (!QFile::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
            QSKIP("this kernel has no transparent huge pages");
        HugePageBuffer b(size_t(4) << 20);
        const std::string flags = vmFlagsOf(b.data());
        QVERIFY2(!flags.empty(), "the buffer's mapping is not in /proc/self/smaps");
        QVERIFY2(flags.find(" hg") != std::string::npos, flags.c_str());
    }
};

QTEST_APPLESS_MAIN(TestHugePageBuffer)
#include "test_huge_page_buffer.moc"
