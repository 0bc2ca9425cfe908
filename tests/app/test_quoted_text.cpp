// quoted_text: how every reader's message quotes a text the user gave, however long or
// strange it is.

#include <QtTest>

#include <string>

#include "quoted_text.h"

using scalelab::quoted_text;

class TestQuotedText : public QObject {
    Q_OBJECT

  private slots:
    void aShortTextIsQuotedWhole() {
        QCOMPARE(QString::fromStdString(quoted_text("cnn")), QString("'cnn'"));
        QCOMPARE(QString::fromStdString(quoted_text("lr", '"')), QString("\"lr\""));
        QCOMPARE(QString::fromStdString(quoted_text("")), QString("''"));
        QCOMPARE(QString::fromStdString(quoted_text(std::string(60, 'a'))),
                 "'" + QString(60, 'a') + "'");
    }

    // A 50 MB value was echoed whole, in every message that named it.
    void aLongTextIsCutWithItsSize() {
        const std::string huge(52428800, 'm');
        QCOMPARE(QString::fromStdString(quoted_text(huge)),
                 "'" + QString(60, 'm') + "...' (52428800 bytes)");
    }

    // Characters are counted, not bytes: a cut never splits one.
    void aCutKeepsWholeCharacters() {
        std::string text;
        for (int i = 0; i < 70; ++i)
            text += "\xc3\xa9";  // é
        QCOMPARE(QString::fromStdString(quoted_text(text)),
                 "'" + QString(60, QChar(0xe9)) + "...' (140 bytes)");
    }

    void controlCharactersAreShownEscaped() {
        QCOMPARE(QString::fromStdString(quoted_text(std::string("a\0b\x1b[2Jc\td\x7f", 11))),
                 QString("'a\\x00b\\x1b[2Jc\td\\x7f'"));
        QCOMPARE(QString::fromStdString(quoted_text("x\xc2\x9by")), QString("'x\\x9by'"));
    }
};

QTEST_APPLESS_MAIN(TestQuotedText)
#include "test_quoted_text.moc"
