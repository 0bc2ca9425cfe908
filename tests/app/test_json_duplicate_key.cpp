// find_duplicate_json_key: the first key an object is given twice, with its path and where both
// are, for the readers of config, lesson and import files.

#include <QtTest>

#include "json_duplicate_key.h"

using scalelab::find_duplicate_json_key;

class TestJsonDuplicateKey : public QObject {
    Q_OBJECT

  private slots:
    void keysOfDifferentObjectsMayRepeat() {
        QVERIFY(!find_duplicate_json_key(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}]})"));
        QVERIFY(!find_duplicate_json_key(R"([1, "a", {"a": 1}, {"a": 2}])"));
        QVERIFY(!find_duplicate_json_key("{}"));
    }

    void theSecondKeyIsFoundWithBothPlaces() {
        const auto found = find_duplicate_json_key(
            "{\n  \"epochs\": 2,\n  \"lr\": 0.1,\n"
            "  \"epochs\": 3\n}\n");
        QVERIFY(found);
        QCOMPARE(QString::fromStdString(found->path), QString("epochs"));
        QCOMPARE(found->line, 4);
        QCOMPARE(found->column, 3);
        QCOMPARE(found->first_line, 2);
        QCOMPARE(found->first_column, 3);
    }

    void aNestedKeyIsNamedByItsPath() {
        const auto found = find_duplicate_json_key(
            R"({"runs": [{"name": "a"}, {"name": "b", "spec": {"lr": 1, "batch": 2, "lr": 3}}]})");
        QVERIFY(found);
        QCOMPARE(QString::fromStdString(found->path), QString("runs[1].spec.lr"));
        QCOMPARE(found->line, 1);
        QCOMPARE(found->column, 70);
        QCOMPARE(found->first_column, 49);
    }

    // Keys are compared as the file means them, and a quote inside a key does not mislead the
    // column.
    void escapedKeysAreDecoded() {
        const auto same = find_duplicate_json_key("{\"lr\": 1, \"\\u006cr\": 2}");
        QVERIFY(same);
        QCOMPARE(same->column, 11);
        const auto quote =
            find_duplicate_json_key("{\"a\\\"b\": 1, \"a\\\"b\\\\\": 2, \"a\\\"b\": 3}");
        QVERIFY(quote);
        QCOMPARE(QString::fromStdString(quote->path), QString("a\"b"));
        QCOMPARE(quote->column, 26);
    }

    void invalidJsonIsLeftToTheCallersParser() {
        QVERIFY(!find_duplicate_json_key(R"({"a": 1,)"));
        QVERIFY(!find_duplicate_json_key(""));
        QVERIFY(!find_duplicate_json_key(R"({"a": 1, "b": })"));
    }
};

QTEST_APPLESS_MAIN(TestJsonDuplicateKey)
#include "test_json_duplicate_key.moc"
