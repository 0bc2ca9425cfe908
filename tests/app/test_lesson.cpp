// Lessons: the shipped ones load, validate and (at test size) train to the end; the format's
// rules (base, runs, the GPU setting, the assessment); and bad files, whose messages name the
// file, the line and the field.

#include <QtTest>

#include <initializer_list>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "lesson.h"
#include "lesson_library.h"
#include "run_collection.h"
#include "run_controller.h"

using namespace scalelab;

namespace {

DeviceInventory no_gpus() {
    DeviceInventory devices;
    devices.cpu_cores = 2;
    devices.no_gpu_reason = "no CUDA backend in this build";
    return devices;
}

DeviceInventory one_gpu() {
    DeviceInventory devices;
    devices.gpus.push_back({0, "test GPU", std::uint64_t(16) << 30});
    return devices;
}

// A document whose line numbers are the positions in the list, counted from 1.
QByteArray lines(std::initializer_list<const char*> list) {
    QByteArray json;
    for (const char* line : list)
        json += QByteArray(line) + '\n';
    return json;
}

// The message parse_lesson throws for `json`, or "" when it parses.
QString error_of(const QByteArray& json, const DeviceInventory& devices = no_gpus()) {
    try {
        parse_lesson(json, QStringLiteral("bad.json"), devices);
    } catch (const LessonError& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

// A valid lesson of two runs, one setting per line, to break one line at a time.
QByteArray valid_lesson(const char* base_extra = "", const char* run_extra = "") {
    QByteArray json = lines({
        "{",                                                                 // 1
        "  \"title\": \"Batch size\",",                                      // 2
        "  \"explanation\": \"What to look for.\",",                         // 3
        "  \"charts\": [\"train_loss\", \"images_per_s\"],",                 // 4
        "  \"x_axis\": \"samples\",",                                        // 5
        "  \"base\": {",                                                     // 6
        "    \"model\": \"mlp\",",                                           // 7
        "    \"dataset\": \"synthetic\",",                                   // 8
        "    BASE_EXTRA",                                                    // 9
        "    \"epochs\": 3",                                                 // 10
        "  },",                                                              // 11
        "  \"runs\": [",                                                     // 12
        "    {\"name\": \"small\", \"batch\": 16},",                         // 13
        "    {\"name\": \"large\", \"batch\": 256, RUN_EXTRA \"lr\": 0.2}",  // 14
        "  ]",                                                               // 15
        "}",                                                                 // 16
    });
    json.replace("BASE_EXTRA", base_extra);
    json.replace("RUN_EXTRA", run_extra);
    return json;
}

}  // namespace

class TestLesson : public QObject {
    Q_OBJECT

  private slots:
    void everyShippedLessonLoadsAndValidates() {
        const std::vector<LessonEntry> entries =
            list_lessons(no_gpus(), LessonSize::Full, {shipped_lessons_folder()});
        QCOMPARE(entries.size(), std::size_t{8});
        std::set<QString> titles;
        for (const LessonEntry& entry : entries) {
            QVERIFY2(entry.lesson, qPrintable(entry.error));
            const Lesson& lesson = *entry.lesson;
            QVERIFY(!lesson.title.isEmpty());
            QVERIFY(!lesson.explanation.isEmpty());
            QVERIFY(!lesson.charts.empty());
            QVERIFY(!lesson.runs.empty());
            titles.insert(lesson.title);
            for (const LessonRun& run : lesson.runs) {
                QVERIFY(!run.name.isEmpty());
                // Full size trains the real dataset; never the synthetic one tests use.
                QCOMPARE(run.spec.dataset, std::string("fashion-mnist"));
                QVERIFY2(run.spec.validate().empty(), qPrintable(lesson.file));
            }
            // Every shipped lesson has a GPU setting; without GPUs it says why it is not used.
            QVERIFY2(lesson.setting_note.startsWith("laptop setting: fashion-mnist"),
                     qPrintable(lesson.setting_note));
            QVERIFY(lesson.setting_note.contains("no CUDA backend in this build"));
        }
        QCOMPARE(titles.size(), entries.size());
    }

    void theAssessmentLessonUsesTheLaptopSettingWithoutCifar10() {
        // GPUs, but no CIFAR-10 folder: the course's setting cannot run.
        const LessonEntry entry =
            load_lesson_file(shipped_lessons_folder() + "/08-assessment.json", one_gpu());
        QVERIFY2(entry.lesson, qPrintable(entry.error));
        const Lesson& lesson = *entry.lesson;
        QVERIFY(lesson.assessment);
        QCOMPARE(lesson.assessment->consecutive_epochs, 2);
        QVERIFY(lesson.assessment->target > 0.75);  // the laptop's target, not the course's
        QVERIFY2(lesson.setting_note.contains("cifar10"), qPrintable(lesson.setting_note));
        QVERIFY2(lesson.setting_note.contains("data_dir"), qPrintable(lesson.setting_note));
        for (const LessonRun& run : lesson.runs) {
            QCOMPARE(run.spec.dataset, std::string("fashion-mnist"));
            QCOMPARE(run.spec.target_accuracy, lesson.assessment->target);
            QCOMPARE(run.spec.patience, lesson.assessment->consecutive_epochs);
        }
    }

    void shippedLessonsTrainToTheEndAtTestSize() {
        std::vector<RunSpec> specs;
        std::map<std::size_t, QString> run_of;  // index in specs -> "lesson: run", for messages
        const std::vector<LessonEntry> entries =
            list_lessons(no_gpus(), LessonSize::Test, {shipped_lessons_folder()});
        for (const LessonEntry& entry : entries) {
            QVERIFY2(entry.lesson, qPrintable(entry.error));
            for (const LessonRun& run : entry.lesson->runs) {
                QCOMPARE(run.spec.dataset, std::string("synthetic"));
                QVERIFY(run.spec.epochs <= 2);
                QVERIFY2(run.spec.validate().empty(), qPrintable(run.name));
                run_of[specs.size()] = entry.lesson->title + ": " + run.name;
                specs.push_back(run.spec);
            }
        }
        RunController controller;
        std::map<int, RunEnd> ends;
        std::map<int, int> epochs;
        connect(&controller, &RunController::epochReported, this,
                [&epochs](int id, const EpochMetrics&) { ++epochs[id]; });
        connect(&controller, &RunController::runEnded, this,
                [&ends](int id, const RunEnd& end) { ends[id] = end; });
        const std::vector<int> ids = controller.enqueue(specs);
        QTRY_VERIFY_WITH_TIMEOUT(ends.size() == ids.size(), 120000);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const RunEnd& end = ends.at(ids[i]);
            const QString what = run_of[i] + ": " + QString::fromStdString(end.message);
            // A lesson may show a run that diverges; none may fail or stop short otherwise.
            QVERIFY2(end.status != RunStatus::Failed && end.status != RunStatus::Cancelled,
                     qPrintable(what));
            if (end.status != RunStatus::Diverged)
                QVERIFY2(epochs[ids[i]] >= 1, qPrintable(what));
        }
    }

    void runsOverrideTheBase() {
        const Lesson lesson =
            parse_lesson(valid_lesson(), QStringLiteral("ok.json"), no_gpus(), LessonSize::Full);
        QCOMPARE(lesson.file, QStringLiteral("ok.json"));
        QCOMPARE(lesson.title, QStringLiteral("Batch size"));
        QCOMPARE(lesson.charts,
                 (std::vector<LessonChart>{LessonChart::TrainLoss, LessonChart::ImagesPerSecond}));
        QCOMPARE(lesson.x_axis, LessonAxis::Samples);
        QCOMPARE(lesson.runs.size(), std::size_t{2});
        QCOMPARE(lesson.runs[0].name, QStringLiteral("small"));
        QCOMPARE(lesson.runs[0].spec.batch, 16);
        QCOMPARE(lesson.runs[0].spec.lr, RunSpec{}.lr);
        QCOMPARE(lesson.runs[1].spec.batch, 256);
        QCOMPARE(lesson.runs[1].spec.lr, 0.2);
        for (const LessonRun& run : lesson.runs) {
            QCOMPARE(run.spec.model, std::string("mlp"));
            QCOMPARE(run.spec.epochs, 3);
        }
        QVERIFY(!lesson.assessment);
        QVERIFY(lesson.setting_note.isEmpty());  // no "gpu" block
    }

    void testSizeShrinksDataAndEpochsOnly() {
        const Lesson lesson =
            parse_lesson(valid_lesson("\"warmup_length\": 3, \"train_subset\": 100,"),
                         QStringLiteral("ok.json"), no_gpus(), LessonSize::Test);
        for (const LessonRun& run : lesson.runs) {
            QCOMPARE(run.spec.dataset, std::string("synthetic"));
            QCOMPARE(run.spec.train_subset, 0);
            QCOMPARE(run.spec.epochs, 2);
            QCOMPARE(run.spec.warmup_length, 2.0);  // all of the run, as it was
            QCOMPARE(run.spec.model, std::string("mlp"));
        }
        QCOMPARE(lesson.runs[1].spec.batch, 256);
        // Every run the same images, enough for the largest batch to train past the steady
        // images/s's warm-up steps: 3 steps of 256 in each of the 2 epochs.
        QCOMPARE(lesson.runs[0].spec.synthetic_train, 768);
        QCOMPARE(lesson.runs[1].spec.synthetic_train, 768);
    }

    // Values out of range meet the test size's arithmetic before validation names them: still
    // the problem, never a division by 0 or an overflow.
    void testSizeLeavesBadValuesToTheirProblems_data() {
        QTest::addColumn<QString>("run_extra");
        QTest::addColumn<QString>("problem");
        QTest::newRow("no epochs") << "\"epochs\": 0,"
                                   << "runs[1].epochs";
        QTest::newRow("huge accumulation") << "\"accumulation\": 2147483647,"
                                           << "runs[1].accumulation";
    }

    void testSizeLeavesBadValuesToTheirProblems() {
        QFETCH(QString, run_extra);
        QFETCH(QString, problem);
        try {
            parse_lesson(valid_lesson("", run_extra.toUtf8().constData()),
                         QStringLiteral("bad.json"), no_gpus(), LessonSize::Test);
            QFAIL("a lesson with a value out of range was read");
        } catch (const LessonError& error) {
            QVERIFY2(QString::fromUtf8(error.what()).contains(problem), error.what());
        }
    }

    void theGpuSettingNeedsGpusAndItsData() {
        const QByteArray json = lines({
            "{\"title\": \"t\", \"explanation\": \"e\", \"charts\": [\"train_loss\"],",
            " \"base\": {\"model\": \"mlp\", \"dataset\": \"synthetic\"},",
            " \"runs\": [{\"name\": \"r\"}],",
            " \"assessment\": {\"target\": 0.85, \"consecutive_epochs\": 2, "
            "\"time_budget_s\": 120},",
            " \"gpu\": {\"base\": {\"model\": \"resnet8\", \"epochs\": 4},",
            "         \"assessment\": {\"target\": 0.75, \"consecutive_epochs\": 3, "
            "\"time_budget_s\": 300}}}",
        });
        const Lesson laptop = parse_lesson(json, QStringLiteral("l.json"), no_gpus());
        QCOMPARE(laptop.runs[0].spec.model, std::string("mlp"));
        QCOMPARE(laptop.assessment->target, 0.85);
        QVERIFY2(laptop.setting_note.startsWith("laptop setting: synthetic, mlp, 1 CPU device"),
                 qPrintable(laptop.setting_note));
        QVERIFY(laptop.setting_note.contains("no CUDA backend in this build"));

        const Lesson gpu = parse_lesson(json, QStringLiteral("l.json"), one_gpu());
        QCOMPARE(gpu.runs[0].spec.model, std::string("resnet8"));
        QCOMPARE(gpu.runs[0].spec.device, scalelab::DeviceKind::Gpu);
        QCOMPARE(laptop.runs[0].spec.device, scalelab::DeviceKind::Cpu);
        QCOMPARE(gpu.assessment->target, 0.75);
        QCOMPARE(gpu.runs[0].spec.patience, 3);
        QCOMPARE(gpu.runs[0].spec.target_accuracy, 0.75);
        QVERIFY2(gpu.setting_note.startsWith("GPU setting: synthetic, resnet8, 1 GPU"),
                 qPrintable(gpu.setting_note));

        // CIFAR-10 has no default folder: with GPUs but no data_dir, the laptop setting runs.
        QByteArray cifar = json;
        cifar.replace("{\"model\": \"resnet8\",",
                      "{\"model\": \"resnet8\", \"dataset\": \"cifar10\",");
        const Lesson no_data = parse_lesson(cifar, QStringLiteral("l.json"), one_gpu());
        QCOMPARE(no_data.runs[0].spec.model, std::string("mlp"));
        QCOMPARE(no_data.assessment->target, 0.85);
        QVERIFY2(no_data.setting_note.contains("cifar10"), qPrintable(no_data.setting_note));

        // More devices than GPUs: the laptop setting, saying why.
        QByteArray four = json;
        four.replace("\"epochs\": 4}", "\"epochs\": 4, \"devices\": 4}");
        const Lesson too_few = parse_lesson(four, QStringLiteral("l.json"), one_gpu());
        QCOMPARE(too_few.runs[0].spec.model, std::string("mlp"));
        QVERIFY2(too_few.setting_note.endsWith("the GPU setting needs 4 GPUs, this machine has 1"),
                 qPrintable(too_few.setting_note));
    }

    void notJsonNamesFileAndLine() {
        const QString error = error_of(lines({"{", "  \"title\": \"t\",", "  \"runs\": [", "}"}));
        QVERIFY2(error.startsWith("bad.json: invalid JSON at line 4"), qPrintable(error));
    }

    void notAnObjectIsRefused() {
        QVERIFY2(error_of("[1, 2]").contains("a lesson is a JSON object"),
                 qPrintable(error_of("[1, 2]")));
    }

    void unknownKeysNameTheirLineAtEveryLevel() {
        QByteArray json = valid_lesson();
        json.replace("\"x_axis\"", "\"xaxis\"");
        QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:5: field 'xaxis': unknown key"), qPrintable(error));

        error = error_of(valid_lesson("\"bacth\": 8,"));
        QVERIFY2(error.contains("bad.json:9: field 'base.bacth': unknown key \"bacth\""),
                 qPrintable(error));

        error = error_of(valid_lesson("", "\"colour\": 1,"));
        QVERIFY2(error.contains("bad.json:14: field 'runs[1].colour': unknown key"),
                 qPrintable(error));

        json = valid_lesson();
        json.replace("\"runs\": [", "\"gpu\": {\"bsae\": {}}, \"runs\": [");
        error = error_of(json);
        QVERIFY2(error.contains("bad.json:12: field 'gpu.bsae': unknown key: gpu takes base, "
                                "assessment"),
                 qPrintable(error));

        json = valid_lesson();
        json.replace("\"runs\": [",
                     "\"assessment\": {\"target\": 0.8, \"consecutive_epochs\": 2, "
                     "\"time_budget_s\": 60, \"budget\": 1}, \"runs\": [");
        error = error_of(json);
        QVERIFY2(error.contains("bad.json:12: field 'assessment.budget': unknown key"),
                 qPrintable(error));
    }

    void unknownModelNamesTheLineThatSetIt() {
        QByteArray json = valid_lesson();
        json.replace("\"mlp\"", "\"resnet99\"");
        const QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:7: field 'base.model': model 'resnet99' is unknown"),
                 qPrintable(error));
        QCOMPARE(error.count('\n'), 0);  // reported once, not once per run
    }

    void unknownOptimizerNamesTheRun() {
        const QString error = error_of(valid_lesson("", "\"optimizer\": \"adam\","));
        QVERIFY2(error.contains("bad.json:14: field 'runs[1].optimizer'"), qPrintable(error));
        QVERIFY2(error.contains("\"lars\""), qPrintable(error));  // the choices
    }

    void aRunThatDoesNotValidateNamesItsField() {
        const QString error = error_of(valid_lesson("", "\"momentum\": 1.5,"));
        QVERIFY2(error.contains(
                     "bad.json:14: field 'runs[1].momentum': momentum must be a number in [0, 1)"),
                 qPrintable(error));
        // A problem no field set is reported at the run.
        QByteArray json = valid_lesson();
        json.replace("\"batch\": 16",
                     "\"batch\": 16, \"warmup_length\": 2.5, "
                     "\"warmup_unit\": \"steps\"");
        const QString at_run = error_of(json);
        QVERIFY2(at_run.contains("bad.json:13: field 'runs[0]"), qPrintable(at_run));
    }

    void repeatsComeFromTheBaseOrTheRun() {
        const Lesson lesson = parse_lesson(valid_lesson("\"repeats\": 3,", "\"repeats\": 5,"),
                                           QStringLiteral("ok.json"), no_gpus());
        QCOMPARE(lesson.runs[0].repeats, 3);
        QCOMPARE(lesson.runs[1].repeats, 5);
        // Not a RunSpec field: taken out before the specs are built, which are as without it.
        const Lesson without = parse_lesson(valid_lesson(), QStringLiteral("ok.json"), no_gpus());
        QCOMPARE(without.runs[0].repeats, 1);
        QCOMPARE(lesson.runs[1].spec.seed, without.runs[1].spec.seed);
        QCOMPARE(lesson.runs[1].spec.lr, 0.2);
        // Test size keeps two: still a group with a spread, in less time.
        const Lesson test = parse_lesson(valid_lesson("\"repeats\": 3,"), QStringLiteral("ok.json"),
                                         no_gpus(), LessonSize::Test);
        QCOMPARE(test.runs[0].repeats, 2);
        QCOMPARE(test.runs[1].repeats, 2);
    }

    void badRepeatsNameTheirField() {
        QString error = error_of(valid_lesson("", "\"repeats\": 0,"));
        QVERIFY2(error.contains("bad.json:14: field 'runs[1].repeats': \"repeats\" must be a "
                                "whole number from 1 to 64, got 0"),
                 qPrintable(error));
        error = error_of(valid_lesson("\"repeats\": 65,"));
        QVERIFY2(error.contains("bad.json:9: field 'base.repeats': \"repeats\" must be a whole "
                                "number from 1 to 64, got 65"),
                 qPrintable(error));
        for (const char* wrong : {"\"repeats\": 2.5,", "\"repeats\": \"3\","}) {
            error = error_of(valid_lesson(wrong));
            QVERIFY2(error.contains("bad.json:9: field 'base.repeats': must be a whole number "
                                    "from 1 to 64"),
                     qPrintable(error));
        }
    }

    void wrongTypesNameTheirField() {
        QByteArray json = valid_lesson();
        json.replace("\"batch\": 256", "\"batch\": \"many\"");
        const QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:14: field 'runs[1].batch'"), qPrintable(error));
        QVERIFY2(error.contains("whole number"), qPrintable(error));
    }

    void emptyOrMissingRunsAreRefused() {
        QByteArray json = valid_lesson();
        const qsizetype start = json.indexOf("\"runs\": [") + 9;
        json.remove(start, json.lastIndexOf(']') - start);
        QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:12: field 'runs': must be a non-empty array"),
                 qPrintable(error));

        error = error_of(R"({"title": "t", "explanation": "e", "charts": ["train_loss"]})");
        QVERIFY2(error.contains("bad.json: the lesson needs \"runs\""), qPrintable(error));
    }

    // A lesson queues at most most_runs_queued_at_once runs: more is refused at once, not
    // checked run by run first.
    void tooManyRunsAreRefused() {
        QByteArray runs;
        for (qsizetype i = 0; i <= scalelab::most_runs_queued_at_once; ++i)
            runs +=
                QByteArray(i == 0 ? "" : ",") + "{\"name\": \"r" + QByteArray::number(i) + "\"}";
        const QByteArray json = R"({"title": "t", "explanation": "e", "charts": ["train_loss"],
            "runs": [)" + runs + "]}";
        const QString error = error_of(json);
        QVERIFY2(error.contains("field 'runs': has 1001 runs; a lesson queues at most 1000: split "
                                "it into several lessons"),
                 qPrintable(error));
    }

    void tooManyRunsWithTheirRepeatsAreRefused() {
        QByteArray runs;
        for (int i = 0; i < 16; ++i)
            runs += QByteArray(i == 0 ? "" : ",") + "{\"name\": \"r" + QByteArray::number(i) +
                    "\", \"repeats\": 63}";
        const QByteArray json = R"({"title": "t", "explanation": "e", "charts": ["train_loss"],
            "base": {"repeats": 64}, "runs": [)" +
                                runs + "]}";
        const QString error = error_of(json);
        QVERIFY2(error.contains("field 'runs': has 1008 runs with their repeats; a lesson queues "
                                "at most 1000: use fewer repeats, or split it into several "
                                "lessons"),
                 qPrintable(error));
        QVERIFY2(error_of(QByteArray(json).replace("63}", "62}")).isEmpty(),
                 qPrintable(error_of(QByteArray(json).replace("63}", "62}"))));
    }

    void runsNeedUniqueNames() {
        QByteArray json = valid_lesson();
        json.replace("\"large\"", "\"small\"");
        QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:14: field 'runs[1].name': \"small\" names another run"),
                 qPrintable(error));
        json = valid_lesson();
        json.replace("\"name\": \"large\",", "");
        error = error_of(json);
        QVERIFY2(error.contains("bad.json:14: field 'runs[1]': needs a \"name\""),
                 qPrintable(error));
    }

    // The lesson's own texts and blocks: missing, empty or of the wrong type, each problem
    // in the words docs/errors.md gives (E-LESSON-KEYS, E-LESSON-CHARTS).
    void lessonTextAndBlocksAreChecked() {
        QByteArray json = valid_lesson();
        json.replace("  \"title\": \"Batch size\",\n", "");
        json.replace("\"What to look for.\"", "\"  \"");
        json.replace("  \"charts\": [\"train_loss\", \"images_per_s\"],\n", "");
        json.replace("  \"base\": {", "  \"gpu\": [1],\n  \"base\": {");
        const QStringList problems = error_of(json).split('\n');
        const QString charts = QStringLiteral(
            "an array of chart names, each one of \"train_loss\", \"val_accuracy\", "
            "\"images_per_s\", \"learning_rate\", \"noise_scale\", \"scaling\", "
            "\"steps_to_target\", \"time_breakdown\"");
        const QStringList expected{
            QStringLiteral("bad.json: the lesson needs a \"title\": the menu's name"),
            QStringLiteral("bad.json:2: field 'explanation': must be a non-empty string: a few "
                           "sentences on what the charts show"),
            QStringLiteral("bad.json: the lesson needs \"charts\": ") + charts,
            QStringLiteral("bad.json:4: field 'gpu': must be an object: {\"base\": {...}, "
                           "\"assessment\": {...}}, the setting used where GPUs are present"),
        };
        for (const QString& problem : expected)
            QVERIFY2(problems.contains(problem), qPrintable(problems.join('\n')));
    }

    void badChartAndAxisNamesAreRefused() {
        QByteArray json = valid_lesson();
        json.replace("\"images_per_s\"", "\"throughput\"");
        QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:4: field 'charts[1]': unknown chart: choose one of"),
                 qPrintable(error));
        QVERIFY(error.contains("\"time_breakdown\""));
        json = valid_lesson();
        json.replace("\"samples\"", "\"wall\"");
        error = error_of(json);
        QVERIFY2(error.contains("bad.json:5: field 'x_axis': must be one of \"step\""),
                 qPrintable(error));
    }

    void badAssessmentsAreRefused() {
        const auto with_assessment = [](const char* assessment) {
            QByteArray json = valid_lesson();
            json.replace("\"runs\": [",
                         QByteArray("\"assessment\": ") + assessment + ",\n  \"runs\": [");
            return error_of(json);
        };
        QString error =
            with_assessment(R"({"target": 1.5, "consecutive_epochs": 2, "time_budget_s": 60})");
        QVERIFY2(error.contains("bad.json:12: field 'assessment.target': must be a validation "
                                "accuracy in (0, 1]"),
                 qPrintable(error));
        error = with_assessment(R"({"target": 0.8, "consecutive_epochs": 2})");
        QVERIFY2(error.contains("field 'assessment': needs \"time_budget_s\""), qPrintable(error));
        error = with_assessment(R"({"target": 0.8, "consecutive_epochs": 0, "time_budget_s": 9})");
        QVERIFY2(error.contains("field 'assessment.consecutive_epochs'"), qPrintable(error));
        // Longer than the runs: they could never pass.
        error = with_assessment(R"({"target": 0.8, "consecutive_epochs": 4, "time_budget_s": 9})");
        QVERIFY2(error.contains("bad.json:10: field 'base.epochs': the assessment needs 4 epochs"),
                 qPrintable(error));
    }

    void claimsNameRunsByTheirNames() {
        QByteArray json = valid_lesson();
        json.replace("  ]\n}", R"(  ],
  "expect": [
    {"claim": "large learns less per epoch", "metric": "epoch_train_loss",
     "run": "small", "better_than": "large", "by": 0.01, "from_epoch": 2},
    {"claim": "loss rises", "metric": "final_train_loss", "rises_over": ["small", "large"],
     "tolerance": 0.1},
    {"claim": "close", "metric": "best_val_accuracy", "run": "large", "within": 0.05, "of": "small"},
    {"claim": "fast", "metric": "images_per_s", "run": "large", "at_least": 1000}
  ]
})");
        const Lesson lesson = parse_lesson(json, QStringLiteral("ok.json"), no_gpus());
        QCOMPARE(lesson.claims.size(), std::size_t(4));
        const LessonClaim& first = lesson.claims[0];
        QCOMPARE(first.text, QStringLiteral("large learns less per epoch"));
        QCOMPARE(first.metric, ClaimMetric::EpochTrainLoss);
        QCOMPARE(first.relation, ClaimRelation::BetterThan);
        QCOMPARE(first.runs, (std::vector<int>{0, 1}));
        QCOMPARE(first.value, 0.01);
        QCOMPARE(first.from_epoch, 2);
        QCOMPARE(lesson.claims[1].relation, ClaimRelation::RisesOver);
        QCOMPARE(lesson.claims[1].runs, (std::vector<int>{0, 1}));
        QCOMPARE(lesson.claims[1].value, 0.1);
        QCOMPARE(lesson.claims[2].runs, (std::vector<int>{1, 0}));
        QCOMPARE(lesson.claims[3].relation, ClaimRelation::AtLeast);
        QCOMPARE(lesson.claims[3].value, 1000.0);
    }

    void badClaimsAreRefusedWithTheirLine() {
        // Each claim alone, on line 17 of the lesson, and what its message must say.
        const std::vector<std::pair<const char*, const char*>> cases{
            {R"({"claim": "x", "metric": "final_train_loss", "run": "medium", "at_most": 1})",
             "bad.json:17: field 'expect[0].run': unknown run: name one of the lesson's runs, "
             "\"small\", \"large\""},
            {R"({"claim": "x", "metric": "train_loss", "run": "small", "at_most": 1})",
             "bad.json:17: field 'expect[0].metric': unknown metric: choose one of "
             "\"final_train_loss\""},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small"})",
             "field 'expect[0]': needs exactly one of \"within\""},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small", "within": 0.1})",
             "field 'expect[0]': \"within\" needs \"of\""},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small", "better_than": "large", "by": -1})",
             "bad.json:17: field 'expect[0].by': must be a number from 0 up"},
            {R"({"claim": "x", "metric": "final_train_loss", "rises_over": ["small"]})",
             "field 'expect[0].rises_over': must list at least two runs"},
            {R"({"claim": "x", "metric": "final_train_loss", "rises_over": ["small", "big"]})",
             "field 'expect[0].rises_over[1]': unknown run"},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small", "at_most": 1, "from_epoch": 2})",
             "field 'expect[0].from_epoch': applies to the epoch_* metrics only"},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small", "at_most": 1, "tolerance": 2})",
             "field 'expect[0].tolerance': does not go with this claim's relation"},
            {R"({"metric": "final_train_loss", "run": "small", "at_most": 1})",
             "field 'expect[0]': needs a \"claim\""},
            {R"({"claim": "x", "metric": "final_train_loss", "run": "small", "at_most": 1, "why": 1})",
             "field 'expect[0].why': unknown key"},
            {R"("large beats small")", "bad.json:17: field 'expect[0]': must be an object"},
            // Found by fuzzing: a huge epoch was cast to int before its problem stopped it.
            {R"({"claim": "x", "metric": "epoch_train_loss", "run": "small", "at_most": 1, "from_epoch": 1.9e19})",
             "field 'expect[0].from_epoch': must be a number from 1 to 1000000"},
            {R"({"claim": "x", "metric": "epoch_train_loss", "run": "small", "at_most": 1, "to_epoch": 2.5})",
             "field 'expect[0].to_epoch': must be a whole epoch"},
        };
        for (const auto& [claim, expected] : cases) {
            QByteArray json = valid_lesson();
            json.replace("  ]\n}", QByteArray("  ],\n  \"expect\": [\n    ") + claim + "\n  ]\n}");
            const QString error = error_of(json);
            QVERIFY2(error.contains(QString::fromUtf8(expected)),
                     qPrintable(claim + (" -> " + error)));
        }
    }

    void theAssessmentAloneSetsTheEarlyStop() {
        QByteArray json = valid_lesson("\"patience\": 3,");
        json.replace("\"runs\": [",
                     "\"assessment\": {\"target\": 0.8, \"consecutive_epochs\": 2, "
                     "\"time_budget_s\": 60},\n  \"runs\": [");
        const QString error = error_of(json);
        QVERIFY2(error.contains("bad.json:9: field 'base.patience': the assessment sets it"),
                 qPrintable(error));
    }

    // A key given twice took its last value silently.
    void aKeyGivenTwiceIsRefused() {
        QCOMPARE(error_of(valid_lesson("\"epochs\": 2,")),
                 QString("bad.json:10: field 'base.epochs': given twice (first at line 9); keep "
                         "one"));
    }

    // Every problem of a file with thousands of them was listed.
    void theProblemsOfAFileAreCapped() {
        QByteArray keys;
        for (int i = 0; i < 1000; ++i)
            keys += "\"k" + QByteArray::number(i) + "\": 1, ";
        const QStringList problems = error_of(valid_lesson(keys.constData())).split('\n');
        QCOMPARE(problems.size(), 21);
        QCOMPARE(problems.last(), QString("bad.json: ... and 980 more problems"));
    }

    // A run's name of 1000 characters was echoed whole.
    void aLongNameIsQuotedCut() {
        const QByteArray name(1000, 'n');
        QByteArray json = valid_lesson();
        json.replace("\"small\"", "\"" + name + "\"").replace("\"large\"", "\"" + name + "\"");
        QCOMPARE(error_of(json), "bad.json:14: field 'runs[1].name': \"" + QString(60, 'n') +
                                     "...\" (1000 bytes) names another run too: give each run "
                                     "its own name");
    }

    void everyProblemIsReported() {
        QByteArray json = valid_lesson("\"bacth\": 8,", "\"momentum\": 1.5,");
        json.replace("\"images_per_s\"", "\"throughput\"");
        const QStringList problems = error_of(json).split('\n');
        QCOMPARE(problems.size(), 3);
        for (const QString& problem : problems)
            QVERIFY2(problem.startsWith("bad.json:"), qPrintable(problem));
    }
};

QTEST_GUILESS_MAIN(TestLesson)
#include "test_lesson.moc"
