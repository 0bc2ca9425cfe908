// npz_bytes: the parts numpy checks (numpy.load reads whole files in initial_state_npz).

#include <QtTest>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "npz_file.h"

using scalelab::npz_bytes;
using scalelab::NpzArray;

namespace {

std::uint32_t read32(const std::string& bytes, std::size_t at) {
    std::uint32_t value = 0;
    for (int i = 3; i >= 0; --i)
        value = (value << 8) | std::uint8_t(bytes[at + std::size_t(i)]);
    return value;
}

}  // namespace

class TestNpzFile : public QObject {
    Q_OBJECT

  private slots:
    // One stored member a.npy: its header a Python dict of the shape, padded so that the
    // values start on a 64-byte boundary, then the floats themselves.
    void oneArrayIsOneAlignedNpyMember() {
        const std::vector<float> values{1, 2, 3, 4, 5, 6};
        const std::string bytes = npz_bytes({{"a", {2, 3}, values}});
        QCOMPARE(read32(bytes, 0), 0x04034b50u);  // a zip's local file header
        const std::size_t npy = 30 + 5;           // the header, then "a.npy"
        QCOMPARE(bytes.substr(30, 5), std::string("a.npy"));
        QCOMPARE(bytes.substr(npy, 8), std::string("\x93NUMPY\x01\x00", 8));
        const std::size_t header = std::uint8_t(bytes[npy + 8]) | std::uint8_t(bytes[npy + 9]) << 8;
        QCOMPARE((10 + header) % 64, std::size_t(0));
        const std::string dict = bytes.substr(npy + 10, header);
        QVERIFY2(dict.find("'shape': (2, 3)") != std::string::npos, dict.c_str());
        QVERIFY(dict.find("'descr': '<f4'") != std::string::npos);
        QCOMPARE(dict.back(), '\n');
        QCOMPARE(bytes.substr(npy + 10 + header, 24),
                 std::string(reinterpret_cast<const char*>(values.data()), 24));
        QCOMPARE(read32(bytes, bytes.size() - 22), 0x06054b50u);  // the end record
    }

    void aVectorsShapeIsAOneTuple() {
        const std::vector<float> values{1, 2};
        const std::string bytes = npz_bytes({{"v", {2}, values}});
        QVERIFY(bytes.find("'shape': (2,)") != std::string::npos);
    }

    void aShapeThatDoesNotHoldTheValuesIsRefused() {
        const std::vector<float> values{1, 2, 3};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, npz_bytes({{"w", {2, 2}, values}}));
    }
};

QTEST_MAIN(TestNpzFile)
#include "test_npz_file.moc"
