#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>

#include "run_collection.h"
#include "run_controller.h"
#include "run_record.h"
#include "stacked_bars_widget.h"
#include "theme.h"
#include "time_breakdown_view.h"

using scalelab::DeviceStepTimes;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::StackedBarsWidget;
using scalelab::StepPhase;
using scalelab::StepTiming;
using scalelab::TimeBreakdownView;

namespace {

constexpr int steps = 100;
constexpr double data_s = 0.0005;
constexpr double optimizer_s = 0.0008;
constexpr double slowdown = 1.5;  // of the straggler's forward and backward

// Forward takes (3 + step/100) ms, backward twice that, so that every window has its own means.
double forward_s(double step) {
    return 0.003 + 0.00001 * step;
}

// A run of `steps` timed steps on `devices` devices, where device `straggler` (when not -1)
// computes `slowdown` times slower than the others and they wait for it before the all-reduce,
// which leaves `exposed_s` unhidden on every device.
RunRecord timed_run(const QString& name, int devices, int straggler, double exposed_s) {
    RunRecord run;
    run.name = name;
    run.state = RunState::Finished;
    run.started = true;
    run.spec.devices = devices;
    run.info.devices = devices;
    double clock = 0;
    for (int step = 1; step <= steps; ++step) {
        StepTiming timing;
        timing.step = step;
        timing.start = clock;
        const double forward = forward_s(step);
        const double slowest = straggler >= 0 ? slowdown : 1.0;
        for (int device = 0; device < devices; ++device) {
            DeviceStepTimes times;
            const double slow = device == straggler ? slowdown : 1.0;
            times.data = data_s;
            times.forward = forward * slow;
            times.backward = 2 * forward * slow;
            times.exposed_comm = exposed_s;
            times.wait = (slowest - slow) * 3 * forward;
            times.optimizer = optimizer_s;
            for (int bucket = 0; bucket < 3; ++bucket) {
                const double start = data_s + times.forward + bucket * times.backward / 3;
                times.allreduce.push_back({start, start + times.backward / 4});
            }
            timing.devices.push_back(times);
        }
        timing.seconds = data_s + slowest * 3 * forward + exposed_s + optimizer_s;
        clock += timing.seconds;
        run.timings.push_back(timing);
    }
    run.step = steps;
    run.train_seconds = clock;
    return run;
}

// The mean of each phase of `device` over steps first..last of a timed_run() with a straggler,
// in milliseconds, from the formulas that made them.
std::array<double, scalelab::step_phase_count> expected_ms(int device, int straggler,
                                                           double exposed_s, int first, int last) {
    const double forward = forward_s((first + last) / 2.0);
    const double slow = device == straggler ? slowdown : 1.0;
    return {data_s * 1000,
            forward * slow * 1000,
            2 * forward * slow * 1000,
            exposed_s * 1000,
            (slowdown - slow) * 3 * forward * 1000,
            optimizer_s * 1000};
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

// Whether the bars show the means of steps first..last of timed_run(name, 3, 2, exposed_s).
void verify_bars(TimeBreakdownView& view, double exposed_s, int first, int last) {
    const StackedBarsWidget& bars = view.bars();
    QCOMPARE(bars.labels(), (QStringList{QStringLiteral("device 0"), QStringLiteral("device 1"),
                                         QStringLiteral("device 2")}));
    QCOMPARE(bars.values().size(), std::size_t(3));
    for (int device = 0; device < 3; ++device) {
        const auto expected = expected_ms(device, 2, exposed_s, first, last);
        QCOMPARE(bars.values()[std::size_t(device)].size(), expected.size());
        for (std::size_t phase = 0; phase < expected.size(); ++phase)
            QVERIFY2(close(bars.values()[std::size_t(device)][phase], expected[phase]),
                     qPrintable(QStringLiteral("device %1 phase %2: %3 ms, expected %4 ms")
                                    .arg(device)
                                    .arg(phase)
                                    .arg(bars.values()[std::size_t(device)][phase])
                                    .arg(expected[phase])));
    }
    const double step_ms =
        (data_s + slowdown * 3 * forward_s((first + last) / 2.0) + exposed_s + optimizer_s) * 1000;
    QVERIFY(close(bars.reference(), step_ms));
}

template <typename T>
T* child(const QWidget& view, const char* name) {
    return view.findChild<T*>(QLatin1String(name));
}

}  // namespace

class TestTimeBreakdownView : public QObject {
    Q_OBJECT

  private slots:
    void without_timed_runs_it_says_how_to_get_one() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord stored = timed_run(QStringLiteral("stored"), 2, 1, 0.001);
        stored.timings.clear();
        const int stored_id = runs.add(stored);
        TimeBreakdownView view(runs);
        view.resize(900, 500);
        view.show();

        QCOMPARE(view.runId(), 0);
        const auto* empty = child<QLabel>(view, "emptyState");
        QVERIFY(empty->isVisible());
        QVERIFY(empty->text().contains(QStringLiteral("runs trained in this window")));
        QVERIFY(empty->text().contains(QStringLiteral("2 or more devices")));

        // A stored run chosen (from the run table, say) is offered, and says why it has no bars.
        view.setRun(stored_id);
        QCOMPARE(view.runId(), stored_id);
        QVERIFY(!empty->isVisible());
        const auto* notice = child<QLabel>(view, "notice");
        QVERIFY(notice->isVisible());
        QVERIFY(notice->text().contains(QStringLiteral("stored runs have none")));
        QCOMPARE(child<QComboBox>(view, "run")->currentText(),
                 QStringLiteral("stored (no timings)"));
        QVERIFY(!child<QPushButton>(view, "exportTrace")->isEnabled());
        QCOMPARE(view.shownBreakdown().steps, 0);
    }

    void the_bars_are_the_means_of_the_last_steps() {
        RunController controller;
        RunCollection runs(controller);
        const int id = runs.add(timed_run(QStringLiteral("three"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        view.resize(900, 500);
        view.show();

        QCOMPARE(view.runId(), id);
        QCOMPARE(view.shownBreakdown().first_step,
                 std::int64_t(steps - TimeBreakdownView::default_last_steps + 1));
        QCOMPARE(view.shownBreakdown().last_step, std::int64_t(steps));
        QCOMPARE(view.shownBreakdown().steps, TimeBreakdownView::default_last_steps);
        verify_bars(view, 0.001, 51, 100);
        QVERIFY(view.bars().isVisible());
        QVERIFY(child<QLabel>(view, "caption")
                    ->text()
                    .startsWith(QStringLiteral("Steps 51\u2013100 (50 steps), mean step ")));
        QVERIFY(child<QPushButton>(view, "exportTrace")->isEnabled());

        // The straggler's segment tells its phase, time and share of the step.
        const QRectF backward = view.bars().segmentRect(2, int(StepPhase::Backward));
        QVERIFY(!backward.isEmpty());
        const QString tip = view.bars().toolTipAt(backward.center().toPoint());
        QVERIFY2(tip.startsWith(QStringLiteral("Backward on device 2")), qPrintable(tip));
        QVERIFY2(tip.contains(view.bars().formatValue(expected_ms(2, 2, 0.001, 51, 100)[2])),
                 qPrintable(tip));
        QVERIFY(view.bars().toolTipAt(QPoint(1, 1)).isEmpty());
    }

    void the_window_can_be_changed() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(timed_run(QStringLiteral("three"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        view.resize(900, 500);
        view.show();

        view.setWindow(11, 20);
        QCOMPARE(view.shownBreakdown().first_step, std::int64_t(11));
        QCOMPARE(view.shownBreakdown().last_step, std::int64_t(20));
        verify_bars(view, 0.001, 11, 20);

        view.setLastSteps(5);
        QCOMPARE(view.shownBreakdown().first_step, std::int64_t(96));
        verify_bars(view, 0.001, 96, 100);

        // Typing a range into the fields chooses it.
        auto* from = child<QSpinBox>(view, "fromStep");
        auto* to = child<QSpinBox>(view, "toStep");
        to->setValue(40);
        from->setValue(31);
        QCOMPARE(view.shownBreakdown().first_step, std::int64_t(31));
        QCOMPARE(view.shownBreakdown().last_step, std::int64_t(40));
        verify_bars(view, 0.001, 31, 40);

        // A window past the timed steps says which steps have timings.
        view.setWindow(500, 600);
        QCOMPARE(view.shownBreakdown().steps, 0);
        QVERIFY(child<QLabel>(view, "notice")->isVisible());
        QVERIFY(child<QLabel>(view, "notice")->text().contains(QStringLiteral("steps 1\u2013100")));
    }

    void from_after_to_is_refused_at_the_fields() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(timed_run(QStringLiteral("three"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        view.resize(900, 500);
        view.show();

        view.setWindow(30, 20);
        const auto* problem = child<QLabel>(view, "windowProblem");
        QVERIFY(problem->isVisible());
        QVERIFY2(problem->text().contains(QStringLiteral("30")) &&
                     problem->text().contains(QStringLiteral("20")),
                 qPrintable(problem->text()));
        // Not clamped: the fields keep what was typed, and nothing is averaged.
        QCOMPARE(child<QSpinBox>(view, "fromStep")->value(), 30);
        QCOMPARE(child<QSpinBox>(view, "toStep")->value(), 20);
        QCOMPARE(view.shownBreakdown().steps, 0);
        QVERIFY(!child<QPushButton>(view, "exportTrace")->isEnabled());
        QString error;
        QVERIFY(!view.exportTrace(QDir::temp().filePath(QStringLiteral("unused.json")), &error));
        QVERIFY(!error.isEmpty());

        view.setWindow(20, 30);
        QVERIFY(!problem->isVisible());
        verify_bars(view, 0.001, 20, 30);
    }

    void the_hints_name_the_straggler_and_exposed_communication() {
        RunController controller;
        RunCollection runs(controller);
        // Devices 0 and 1 wait a third of the step for device 2; 5 ms of 19 are unhidden.
        runs.add(timed_run(QStringLiteral("straggler"), 3, 2, 0.005));
        TimeBreakdownView view(runs);
        const QStringList hints = TimeBreakdownView::hints(view.shownBreakdown());
        QCOMPARE(hints.size(), 2);
        QVERIFY2(hints[0].startsWith(QStringLiteral("Devices 0 and 1 wait")), qPrintable(hints[0]));
        QVERIFY2(hints[0].contains(QStringLiteral("device 2 waits least (0%)")),
                 qPrintable(hints[0]));
        QVERIFY2(hints[1].startsWith(QStringLiteral("Exposed communication")),
                 qPrintable(hints[1]));
        QVERIFY(child<QLabel>(view, "hint")->text().contains(hints[1]));

        // Without a straggler and with communication hidden, nothing stands out.
        const int balanced = runs.add(timed_run(QStringLiteral("balanced"), 3, -1, 0.0));
        view.setRun(balanced);
        QVERIFY(TimeBreakdownView::hints(view.shownBreakdown()).isEmpty());
        QVERIFY(child<QLabel>(view, "hint")->text().startsWith(QStringLiteral("No device")));
    }

    void follows_the_latest_run_until_one_is_chosen() {
        RunController controller;
        RunCollection runs(controller);
        const int first = runs.add(timed_run(QStringLiteral("first"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        QCOMPARE(view.runId(), first);

        const int second = runs.add(timed_run(QStringLiteral("second"), 2, 1, 0.001));
        QTRY_COMPARE(view.shownBreakdown().devices.size(), std::size_t(2));
        QCOMPARE(view.runId(), second);
        auto* box = child<QComboBox>(view, "run");
        QCOMPARE(box->count(), 2);
        QCOMPARE(box->currentText(), QStringLiteral("second"));

        // Chosen in the run box, a run stays shown when others come.
        box->setCurrentIndex(0);
        emit box->activated(0);
        QCOMPARE(view.runId(), first);
        runs.add(timed_run(QStringLiteral("third"), 4, 1, 0.001));
        QTRY_COMPARE(box->count(), 3);
        QCOMPARE(view.runId(), first);

        // Renamed and removed runs are followed.
        runs.rename(first, QStringLiteral("renamed"));
        QTRY_COMPARE(box->itemText(0), QStringLiteral("renamed"));
        runs.remove(first);
        QTRY_COMPARE(box->count(), 2);
        QCOMPARE(box->currentText(), QStringLiteral("third"));
    }

    void prefers_the_latest_running_run() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord live = timed_run(QStringLiteral("live"), 2, 1, 0.001);
        live.state = RunState::Running;
        const int live_id = runs.add(live);
        runs.add(timed_run(QStringLiteral("finished later"), 2, 1, 0.001));
        TimeBreakdownView view(runs);
        QCOMPARE(view.runId(), live_id);
    }

    void exports_the_window_as_a_chrome_trace() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(timed_run(QStringLiteral("three / devices"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        view.setWindow(11, 20);
        QCOMPARE(view.defaultTraceName(), QStringLiteral("three - devices-steps-11-20.trace.json"));

        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        const QString path = folder.filePath(view.defaultTraceName());
        QString error;
        QVERIFY2(view.exportTrace(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError parse;
        const QJsonDocument trace = QJsonDocument::fromJson(file.readAll(), &parse);
        QCOMPARE(parse.error, QJsonParseError::NoError);
        QSet<int> processes;
        QSet<qint64> traced_steps;
        for (const QJsonValue& event :
             trace.object().value(QStringLiteral("traceEvents")).toArray()) {
            const QJsonObject object = event.toObject();
            if (object.value(QStringLiteral("name")).toString() == QStringLiteral("process_name"))
                processes.insert(object.value(QStringLiteral("pid")).toInt());
            if (object.value(QStringLiteral("ph")).toString() == QStringLiteral("X"))
                traced_steps.insert(object.value(QStringLiteral("args"))
                                        .toObject()
                                        .value(QStringLiteral("step"))
                                        .toInteger());
        }
        QCOMPARE(processes, (QSet<int>{0, 1, 2}));
        QCOMPARE(traced_steps.size(), 10);
        QCOMPARE(*std::min_element(traced_steps.begin(), traced_steps.end()), qint64(11));

        // A folder that cannot be written to is named in the error.
        QVERIFY(!view.exportTrace(folder.filePath(QStringLiteral("missing/trace.json")), &error));
        QVERIFY2(error.contains(QStringLiteral("missing")), qPrintable(error));
    }

    void paints_each_phase_in_its_colour_in_both_themes() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(timed_run(QStringLiteral("four devices"), 4, 3, 0.0025));
        TimeBreakdownView view(runs);
        view.resize(1100, 560);
        view.show();

        const auto verify_colours = [&](const QImage& image) {
            for (StepPhase phase : scalelab::all_step_phases) {
                const QRectF segment = view.bars().segmentRect(0, int(phase));
                if (segment.isEmpty())
                    continue;  // device 0 does not wait
                QVERIFY(segment.width() > 8);
                const QPoint inside = (segment.topLeft() + QPointF(5, 5)).toPoint();
                QCOMPARE(image.pixelColor(inside), TimeBreakdownView::phaseColour(phase));
            }
        };
        const QImage light = view.bars().grab().toImage();
        verify_colours(light);
        QCOMPARE(light.pixelColor(2, 2), QColor(Qt::white));

        scalelab::apply_theme(*qApp, scalelab::Theme::Dark);
        view.setDarkTheme(true);
        QCoreApplication::processEvents();  // the palette reaches the widgets through events
        const QImage dark = view.bars().grab().toImage();
        verify_colours(dark);
        QVERIFY(dark.pixelColor(2, 2).lightness() < 64);

        // Screenshots for a person to look at, when asked for.
        const QString folder = qEnvironmentVariable("SCALELAB_SCREENSHOTS");
        if (!folder.isEmpty()) {
            view.grab().save(QDir(folder).filePath(QStringLiteral("h-breakdown-view-dark.png")));
            scalelab::apply_theme(*qApp, scalelab::Theme::Light);
            view.setDarkTheme(false);
            QCoreApplication::processEvents();
            view.grab().save(QDir(folder).filePath(QStringLiteral("h-breakdown-view.png")));
        }
        scalelab::apply_theme(*qApp, scalelab::Theme::Light);
    }

    // A window of steps that shows nothing says what to change (docs/errors.md,
    // E-EXPORT-WINDOW, E-EXPORT-NOTHING).
    void the_window_problems_say_what_to_change() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(timed_run(QStringLiteral("three"), 3, 2, 0.001));
        TimeBreakdownView view(runs);
        view.resize(900, 500);
        view.show();

        view.setWindow(30, 20);
        QCOMPARE(child<QLabel>(view, "windowProblem")->text(),
                 QStringLiteral("Step 30 comes after step 20: make \u201cfrom\u201d at most "
                                "\u201cto\u201d."));
        QString error;
        QVERIFY(!view.exportTrace(QDir::temp().filePath(QStringLiteral("unused.json")), &error));
        QCOMPARE(error, QStringLiteral("Nothing to export: choose a run and a window with timed "
                                       "steps."));

        view.setWindow(200, 300);
        QCOMPARE(child<QLabel>(view, "notice")->text(),
                 QStringLiteral("No timed steps from 200 to 300: \u201cthree\u201d has timings for "
                                "steps 1\u2013100."));
    }
};

QTEST_MAIN(TestTimeBreakdownView)
#include "test_time_breakdown_view.moc"
