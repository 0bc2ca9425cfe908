// The catalogue of error messages (docs/errors.md) against the source tree, so that neither can
// drift from the other: every catalogued message is still in the code, every test named as
// covering one still exists, and every check of the run settings and of the dataset readers has
// its entry. The checks run on the files themselves (SCALELAB_SOURCE_DIR); the last tests show
// that each check does fail on a catalogue or a source that breaks it.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#include <algorithm>
#include <vector>

namespace {

// Fixed text shorter than this is not checked: " (got ", "; " and the like say nothing.
constexpr qsizetype shortest_checked_text = 12;

QString read_text(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QString source_path(const QString& relative) {
    return QDir(QStringLiteral(SCALELAB_SOURCE_DIR)).filePath(relative);
}

// What a message's fixed text is compared by: its ends without spaces and quote marks, which
// sit next to a placeholder as often as inside a literal.
QString trimmed_text(const QString& text) {
    static const QString quotes = QStringLiteral("'\"\u201c\u201d");
    qsizetype first = 0, last = text.size();
    while (first < last && (text[first].isSpace() || quotes.contains(text[first])))
        ++first;
    while (last > first && (text[last - 1].isSpace() || quotes.contains(text[last - 1])))
        --last;
    return text.mid(first, last - first);
}

// ---- The catalogue ----

struct Entry {
    QString id;
    int line = 0;
    QStringList messages;  // the lines of its ```text block, placeholders as <name>
    QStringList tests;     // "program::function"
};

// Entries start at "### E-ID: title"; the first fenced block holds the messages, the line
// starting "**Tests:**" the covering tests as `program::function`.
std::vector<Entry> parse_catalogue(const QString& text) {
    static const QRegularExpression test_name(QStringLiteral("`(\\w+::\\w+)`"));
    std::vector<Entry> entries;
    bool in_block = false, block_done = false;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString& line = lines[i];
        if (line.startsWith(QLatin1String("### E-"))) {
            entries.push_back(
                {line.mid(4).section(QLatin1Char(':'), 0, 0).trimmed(), int(i + 1), {}, {}});
            in_block = block_done = false;
        } else if (entries.empty() || line.startsWith(QLatin1String("## "))) {
            continue;
        } else if (line.startsWith(QLatin1String("```"))) {
            in_block = !in_block && !block_done;
            block_done = block_done || !in_block;
        } else if (in_block) {
            if (!line.trimmed().isEmpty())
                entries.back().messages.append(line);
        } else if (line.startsWith(QLatin1String("**Tests:**"))) {
            for (const QRegularExpressionMatch& m : test_name.globalMatch(line))
                entries.back().tests.append(m.captured(1));
        }
    }
    return entries;
}

// The fixed parts of a message: the text between its <placeholders>.
QStringList fixed_parts(const QString& message) {
    static const QRegularExpression placeholder(QStringLiteral("<[^<>]+>"));
    QStringList parts;
    for (const QString& part : message.split(placeholder))
        if (trimmed_text(part).size() >= shortest_checked_text)
            parts.append(trimmed_text(part));
    return parts;
}

// ---- C++ string literals ----

struct Literal {
    qsizetype begin = 0;  // where its opening quote is in the file
    QString text;         // the value, escapes decoded; adjacent literals joined
};

// The value of the literal body starting at `i` (after its opening quote); `i` ends after the
// closing quote.
QString decode_literal(const QString& code, qsizetype& i) {
    QString text;
    while (i < code.size() && code[i] != QLatin1Char('"')) {
        if (code[i] != QLatin1Char('\\')) {
            text += code[i++];
            continue;
        }
        const QChar escaped = i + 1 < code.size() ? code[i + 1] : QChar();
        i += 2;
        switch (escaped.unicode()) {
            case 'n':
                text += QLatin1Char('\n');
                break;
            case 't':
                text += QLatin1Char('\t');
                break;
            case 'r':
                text += QLatin1Char('\r');
                break;
            case 'u':
            case 'U': {
                const int digits = escaped == QLatin1Char('u') ? 4 : 8;
                const char32_t c = code.mid(i, digits).toUInt(nullptr, 16);
                text += QString::fromUcs4(&c, 1);
                i += digits;
                break;
            }
            default:  // \" \' \\ \? and the rare others: the character itself
                text += escaped;
                break;
        }
    }
    ++i;
    return text;
}

bool is_identifier_char(QChar c) {
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

// Every string literal of a C++ file, adjacent ones ("a" "b") joined as the compiler joins
// them. `blanked` receives the code with comments and literals turned into spaces, for
// matching parentheses without being misled by the ones in messages.
std::vector<Literal> string_literals(const QString& code, QString* blanked = nullptr) {
    std::vector<Literal> literals;
    QString blank = code;
    bool joinable = false;  // only spaces and comments since the last literal
    qsizetype i = 0;
    const auto blank_out = [&](qsizetype from, qsizetype to) {
        for (qsizetype k = from; k < to; ++k)
            if (blank[k] != QLatin1Char('\n'))
                blank[k] = QLatin1Char(' ');
    };
    while (i < code.size()) {
        const QChar c = code[i];
        if (code.mid(i, 2) == QLatin1String("//")) {
            const qsizetype end = code.indexOf(QLatin1Char('\n'), i);
            blank_out(i, end < 0 ? code.size() : end);
            i = end < 0 ? code.size() : end;
        } else if (code.mid(i, 2) == QLatin1String("/*")) {
            const qsizetype end = code.indexOf(QLatin1String("*/"), i + 2);
            blank_out(i, end < 0 ? code.size() : end + 2);
            i = end < 0 ? code.size() : end + 2;
        } else if (c == QLatin1Char('\'')) {
            // A digit separator (60'000) follows a digit; a character literal does not.
            if (i > 0 && is_identifier_char(code[i - 1])) {
                ++i;
                continue;
            }
            qsizetype end = i + 1;
            while (end < code.size() && code[end] != QLatin1Char('\''))
                end += code[end] == QLatin1Char('\\') ? 2 : 1;
            blank_out(i, end + 1);
            i = end + 1;
            joinable = false;
        } else if (c == QLatin1Char('"')) {
            const bool raw = i > 0 && code[i - 1] == QLatin1Char('R') &&
                             (i < 2 || !is_identifier_char(code[i - 2]) ||
                              code.mid(i - 3, 2) == QLatin1String("u8"));
            const qsizetype begin = i;
            QString text;
            if (raw) {
                const qsizetype open = code.indexOf(QLatin1Char('('), i);
                const QString close = QLatin1Char(')') + code.mid(i + 1, open - i - 1) + '"';
                const qsizetype end = code.indexOf(close, open);
                text = code.mid(open + 1, end - open - 1);
                i = end + close.size();
            } else {
                ++i;
                text = decode_literal(code, i);
            }
            blank_out(begin, i);
            if (joinable && !literals.empty())
                literals.back().text += text;
            else
                literals.push_back({begin, text});
            joinable = true;
        } else {
            if (!c.isSpace())
                joinable = false;
            ++i;
        }
    }
    if (blanked)
        *blanked = blank;
    return literals;
}

// ---- Where messages are looked for ----

// The string literals of the product's source: engine/, app/ and ui/, tests left out.
class SourceText {
  public:
    explicit SourceText(const QStringList& folders) {
        for (const QString& folder : folders) {
            QDirIterator it(source_path(folder), {QStringLiteral("*.cpp"), QStringLiteral("*.h")},
                            QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext())
                add(read_text(it.next()));
        }
        finish();
    }
    // A source made of these files' contents, for the tests of the checks themselves.
    static SourceText of(const QStringList& files) {
        SourceText source;
        for (const QString& text : files)
            source.add(text);
        source.finish();
        return source;
    }

    // Whether the code can produce `text`: it is part of one literal, or it is the end of one
    // literal, then whole literals, then the start of one, as code joining literals with `+`
    // (the placeholders in between being the variable parts) produces it.
    bool produces(const QString& text) const {
        if (joined_.contains(text))
            return true;
        const qsizetype n = text.size();
        std::vector<bool> reached(std::size_t(n + 1), false);
        for (qsizetype j = 1; j < n; ++j)
            reached[std::size_t(j)] = ends_a_literal(text.left(j));
        for (qsizetype i = 1; i < n; ++i) {
            if (!reached[std::size_t(i)])
                continue;
            if (starts_a_literal(text.mid(i)))
                return true;
            for (qsizetype j = i + 1; j < n; ++j)
                if (whole_.contains(text.mid(i, j - i)))
                    reached[std::size_t(j)] = true;
        }
        return false;
    }

  private:
    SourceText() = default;

    void add(const QString& code) {
        // A message line of a multi-line literal (a usage text) stands on its own too, and so
        // does each text between the %1 placeholders of a QString's arg().
        static const QRegularExpression pieces(QStringLiteral("\n|%\\d"));
        for (const Literal& literal : string_literals(code)) {
            literals_.append(literal.text);
            literals_.append(literal.text.split(pieces));
        }
    }
    void finish() {
        literals_.removeDuplicates();
        literals_.removeAll(QString());
        joined_ = literals_.join(QChar(1));
        whole_ = QSet<QString>(literals_.begin(), literals_.end());
        sorted_ = literals_;
        sorted_.sort();
        for (const QString& literal : literals_)
            reversed_sorted_.append(reversed(literal));
        reversed_sorted_.sort();
    }

    static QString reversed(QString text) {
        std::reverse(text.begin(), text.end());
        return text;
    }
    static bool has_one_starting_with(const QStringList& sorted, const QString& start) {
        const auto it = std::lower_bound(sorted.begin(), sorted.end(), start);
        return it != sorted.end() && it->startsWith(start);
    }
    bool starts_a_literal(const QString& text) const {
        return has_one_starting_with(sorted_, text);
    }
    bool ends_a_literal(const QString& text) const {
        return has_one_starting_with(reversed_sorted_, reversed(text));
    }

    QStringList literals_;
    QString joined_;
    QSet<QString> whole_;
    QStringList sorted_, reversed_sorted_;
};

// ---- The checks; each returns its problems, one per line ----

QStringList check_entries(const std::vector<Entry>& entries) {
    static const QRegularExpression id_form(QStringLiteral("^E-[A-Z0-9]+(-[A-Z0-9]+)*$"));
    QStringList problems;
    QSet<QString> ids;
    for (const Entry& entry : entries) {
        const QString where = QStringLiteral("docs/errors.md:%1: %2").arg(entry.line).arg(entry.id);
        if (!id_form.match(entry.id).hasMatch())
            problems.append(where + QStringLiteral(": an ID is E- and capitals, like E-SPEC-LR"));
        if (ids.contains(entry.id))
            problems.append(where + QStringLiteral(": the ID is taken by another entry"));
        ids.insert(entry.id);
        if (entry.messages.isEmpty())
            problems.append(where + QStringLiteral(": no message (a ```text block)"));
        if (entry.tests.isEmpty())
            problems.append(where + QStringLiteral(": no covering test (**Tests:**)"));
        const bool checkable =
            std::any_of(entry.messages.begin(), entry.messages.end(),
                        [](const QString& m) { return !fixed_parts(m).isEmpty(); });
        if (!entry.messages.isEmpty() && !checkable)
            problems.append(where + QStringLiteral(": no message has fixed text of %1 characters "
                                                   "or more to check")
                                        .arg(shortest_checked_text));
    }
    return problems;
}

QStringList check_messages(const std::vector<Entry>& entries, const SourceText& source) {
    QStringList problems;
    for (const Entry& entry : entries)
        for (const QString& message : entry.messages)
            for (const QString& part : fixed_parts(message))
                if (!source.produces(part))
                    problems.append(QStringLiteral("%1: \"%2\" is in no message of the source")
                                        .arg(entry.id, part));
    return problems;
}

// `tests` maps a test program's name to its source.
QStringList check_tests(const std::vector<Entry>& entries, const QHash<QString, QString>& tests) {
    QStringList problems;
    for (const Entry& entry : entries)
        for (const QString& test : entry.tests) {
            const QString program = test.section(QStringLiteral("::"), 0, 0);
            const QString function = test.section(QStringLiteral("::"), 1);
            if (!tests.contains(program))
                problems.append(QStringLiteral("%1: there is no test program %2 (tests/**/%2.cpp)")
                                    .arg(entry.id, program));
            else if (!tests[program].contains(QStringLiteral("void %1(").arg(function)))
                problems.append(QStringLiteral("%1: %2 has no test function %3")
                                    .arg(entry.id, program, function));
        }
    return problems;
}

QHash<QString, QString> test_sources() {
    QHash<QString, QString> sources;
    QDirIterator it(source_path(QStringLiteral("tests")), {QStringLiteral("test_*.cpp")},
                    QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        sources.insert(QFileInfo(path).completeBaseName(), read_text(path));
    }
    return sources;
}

// The literals of every call or statement that starts at a match of `start` (found in the code
// with comments and literals blanked) and ends at the parenthesis closing its first one.
std::vector<QString> literals_of_calls(const QString& code, const QRegularExpression& start,
                                       qsizetype from = 0, qsizetype to = -1) {
    QString blank;
    const std::vector<Literal> literals = string_literals(code, &blank);
    if (to < 0)
        to = code.size();
    std::vector<QString> found;
    for (const QRegularExpressionMatch& m : start.globalMatch(blank, from)) {
        if (m.capturedStart() >= to)
            break;
        qsizetype i = blank.indexOf(QLatin1Char('('), m.capturedStart());
        int depth = 0;
        for (; i < blank.size(); ++i) {
            depth += blank[i] == QLatin1Char('(') ? 1 : blank[i] == QLatin1Char(')') ? -1 : 0;
            if (depth == 0)
                break;
        }
        for (const Literal& literal : literals)
            if (literal.begin > m.capturedStart() && literal.begin < i)
                found.push_back(literal.text);
    }
    return found;
}

// Each literal of `literals` long enough to say something must be part of a catalogued
// message, placeholders and all.
QStringList check_catalogued(const std::vector<QString>& literals,
                             const std::vector<Entry>& entries, const QString& where) {
    QStringList messages;
    for (const Entry& entry : entries)
        messages += entry.messages;
    const QString catalogue = messages.join(QLatin1Char('\n'));
    QStringList problems;
    for (const QString& literal : literals) {
        const QString text = trimmed_text(literal);
        if (text.size() >= shortest_checked_text && !catalogue.contains(text))
            problems.append(
                QStringLiteral("%1: \"%2\" is in no entry of docs/errors.md").arg(where, text));
    }
    return problems;
}

// Every message of RunSpec::validate(): the literals of its require(...) calls.
std::vector<QString> run_spec_messages(const QString& run_spec_cpp) {
    const qsizetype begin = run_spec_cpp.indexOf(QLatin1String("RunSpec::validate() const"));
    const qsizetype end = run_spec_cpp.indexOf(QLatin1String("\n}\n"), begin);
    if (begin < 0 || end < 0)
        return {};
    static const QRegularExpression require(QStringLiteral("\\brequire\\("));
    return literals_of_calls(run_spec_cpp, require, begin, end);
}

// Every user-facing error of a dataset reader: the literals of each `throw Error(...)` of a
// kind other than Internal, and of the calls to the two helpers that throw for the readers.
std::vector<QString> dataset_messages(const QString& cpp) {
    static const QRegularExpression throws(
        QStringLiteral("\\bthrow Error\\(ErrorKind::(?!Internal)|\\bcorrupt\\(|\\bcheck\\("));
    return literals_of_calls(cpp, throws);
}

// Every problem on a line of its own (QTest shortens a failure's message), then their count.
QString reported(const QStringList& problems) {
    for (const QString& problem : problems)
        qWarning("%s", qPrintable(problem));
    return QStringLiteral("%1 problem(s), each in a warning above").arg(problems.size());
}

}  // namespace

class TestErrorCatalogue : public QObject {
    Q_OBJECT

    std::vector<Entry> entries_;

  private slots:
    void initTestCase() {
        entries_ = parse_catalogue(read_text(source_path(QStringLiteral("docs/errors.md"))));
        QVERIFY2(entries_.size() >= 50, "docs/errors.md is missing or has lost its entries");
        QSet<QString> tests;
        qsizetype messages = 0;
        for (const Entry& entry : entries_) {
            messages += entry.messages.size();
            for (const QString& test : entry.tests)
                tests.insert(test);
        }
        qInfo("docs/errors.md: %d entries, %d messages, covered by %d test functions",
              int(entries_.size()), int(messages), int(tests.size()));
    }

    void everyEntryIsComplete() {
        QVERIFY2(check_entries(entries_).isEmpty(), qPrintable(reported(check_entries(entries_))));
    }

    void everyMessageIsInTheSource() {
        const SourceText source(
            {QStringLiteral("engine"), QStringLiteral("app"), QStringLiteral("ui")});
        const QStringList problems = check_messages(entries_, source);
        QVERIFY2(problems.isEmpty(), qPrintable(reported(problems)));
    }

    void everyCoveringTestExists() {
        const QStringList problems = check_tests(entries_, test_sources());
        QVERIFY2(problems.isEmpty(), qPrintable(reported(problems)));
    }

    void everyRunSpecCheckIsCatalogued() {
        const std::vector<QString> messages =
            run_spec_messages(read_text(source_path(QStringLiteral("engine/train/run_spec.cpp"))));
        // The ranges are checked by one loop over the field table (E-SPEC-RANGE); these are the
        // rules that involve more than one field's range.
        QVERIFY2(messages.size() >= 15, "RunSpec::validate() was not found, or lost its checks");
        const QStringList problems =
            check_catalogued(messages, entries_, QStringLiteral("run_spec.cpp"));
        QVERIFY2(problems.isEmpty(), qPrintable(reported(problems)));
    }

    void everyDatasetErrorIsCatalogued() {
        const QDir data(source_path(QStringLiteral("engine/data")));
        std::size_t count = 0;
        QStringList problems;
        for (const QString& name : data.entryList({QStringLiteral("*.cpp")}, QDir::Files)) {
            const std::vector<QString> messages = dataset_messages(read_text(data.filePath(name)));
            count += messages.size();
            problems += check_catalogued(messages, entries_, QStringLiteral("engine/data/") + name);
        }
        QVERIFY2(count >= 40, "the dataset readers' errors were not found");
        QVERIFY2(problems.isEmpty(), qPrintable(reported(problems)));
    }

    // ---- The checks fail where they should ----

    void literalsAreReadAsTheCompilerReadsThem() {
        const QString code = QStringLiteral(
            "// \"not a literal\"\n"
            "char q = '\"'; int n = 60'000;\n"
            "f(\"one \" /* joined */ \"two\", \"\\u201cquoted\\u201d\\n\", R\"(raw \"text\")\");");
        const std::vector<Literal> literals = string_literals(code);
        QCOMPARE(int(literals.size()), 3);
        QCOMPARE(literals[0].text, QStringLiteral("one two"));
        QCOMPARE(literals[1].text, QStringLiteral("\u201cquoted\u201d\n"));
        QCOMPARE(literals[2].text, QStringLiteral("raw \"text\""));
    }

    void aMessageIsFoundWhereTheCodeJoinsItsParts() {
        const SourceText source = SourceText::of({QStringLiteral(
            "throw Error(k, \"--\" + name + \" expects \" + what + \", got '\" + v + \"'\");\n"
            "expects(\"milestones\", \"whole numbers like 30,60\", value);")});
        QVERIFY(
            source.produces(QStringLiteral("--milestones expects whole numbers like 30,60, got")));
        QVERIFY(source.produces(QStringLiteral("expects whole numbers")));
        QVERIFY(!source.produces(QStringLiteral("--milestones expects hole numbers like 30,60")));
    }

    void aMisspeltMessageIsCaught() {
        const SourceText source = SourceText::of(
            {QStringLiteral("require(ok, \"width must be between 1 and 64 (got \" + n + \")\");")});
        std::vector<Entry> entries = parse_catalogue(QStringLiteral(
            "### E-SPEC-WIDTH: width\n```text\nwidth must be betwen 1 and 64 (got <n>)\n```\n"
            "**Tests:** `test_run_spec_validate::each_mistake_gets_exactly_its_message`\n"));
        QCOMPARE(int(entries.size()), 1);
        QVERIFY(check_entries(entries).isEmpty());
        QCOMPARE(check_messages(entries, source).size(), 1);
        entries[0].messages =
            QStringList{QStringLiteral("width must be between 1 and 64 (got <n>)")};
        QVERIFY(check_messages(entries, source).isEmpty());
    }

    void aMissingTestIsCaught() {
        const std::vector<Entry> entries = parse_catalogue(
            QStringLiteral("### E-A: a\n```text\nsomething that went wrong\n```\n"
                           "**Tests:** `test_x::present`, `test_x::absent`, `test_y::present`\n"));
        const QHash<QString, QString> tests{
            {QStringLiteral("test_x"), QStringLiteral("void present() {}")}};
        const QStringList problems = check_tests(entries, tests);
        QCOMPARE(problems.size(), 2);
        QVERIFY2(problems[0].contains(QStringLiteral("absent")), qPrintable(problems[0]));
        QVERIFY2(problems[1].contains(QStringLiteral("test_y")), qPrintable(problems[1]));
    }

    void anIncompleteEntryIsCaught() {
        const std::vector<Entry> entries = parse_catalogue(QStringLiteral(
            "### E-A: no message\n**Tests:** `test_x::f`\n"
            "### E-A: taken, no test\n```text\na message long enough\n```\n"
            "### E-B: nothing to check\n```text\n<n> <m>\n```\n**Tests:** `test_x::f`\n"));
        QCOMPARE(int(entries.size()), 3);
        QCOMPARE(check_entries(entries).size(), 4);
    }

    void anUncataloguedCheckIsCaught() {
        const QString run_spec = QStringLiteral(
            "std::vector<std::string> RunSpec::validate() const {\n"
            "    require(width >= 1, \"width must be at least 1 (got \" + n + \")\");\n"
            "    require(depth >= 1, \"depth must be at least one layer\");\n"
            "    return errors;\n}\n");
        const std::vector<QString> messages = run_spec_messages(run_spec);
        QCOMPARE(int(messages.size()), 3);
        const std::vector<Entry> entries = parse_catalogue(QStringLiteral(
            "### E-W: w\n```text\nwidth must be at least 1 (got <n>)\n```\n**Tests:** `t::f`\n"));
        const QStringList problems =
            check_catalogued(messages, entries, QStringLiteral("run_spec"));
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems[0].contains(QStringLiteral("depth must be")), qPrintable(problems[0]));

        const QString reader = QStringLiteral(
            "throw Error(ErrorKind::DatasetCorrupt, \"the file ends too early to be read\");\n"
            "throw Error(ErrorKind::Internal, \"a bug: the index ran past its end\");\n"
            "corrupt(path, \"holds a label that is out of range\");\n");
        QCOMPARE(int(dataset_messages(reader).size()), 2);
        QCOMPARE(check_catalogued(dataset_messages(reader), entries, QStringLiteral("r")).size(),
                 2);
    }
};

QTEST_APPLESS_MAIN(TestErrorCatalogue)
#include "test_error_catalogue.moc"
