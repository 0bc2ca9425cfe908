// scalelab: the desktop window. Opens with a default experiment ready to start (Fashion-MNIST,
// cnn, 2 devices); `scalelab --help` lists the options.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QSettings>
#include <QTimer>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "allocator_policy.h"
#include "experiment_form.h"
#include "lesson_library.h"
#include "main_window.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_store.h"
#include "theme.h"
#include "window_settings.h"

namespace {

// Milliseconds since the kernel started this process (10 ms resolution: /proc counts clock
// ticks), so that the start-up figure includes loading the program and its libraries; -1 where
// /proc cannot tell.
long long ms_since_process_start() {
    std::ifstream stat("/proc/self/stat");
    std::string line;
    std::getline(stat, line);
    // Fields after the command name (which may hold spaces) start after its closing ')';
    // starttime is field 22 of the whole line, the 20th after that.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 0; i < 20 && fields >> field; ++i) {
    }
    std::ifstream uptime_file("/proc/uptime");
    double uptime = 0;
    if (field.empty() || !(uptime_file >> uptime))
        return -1;
    const double started = std::stod(field) / double(sysconf(_SC_CLK_TCK));
    return static_cast<long long>((uptime - started) * 1000.0);
}

// Quits once the window has been painted the first time and prints how long that took: the
// window-up figure of docs/benchmarks.md (scripts/bench_ui.sh).
class FirstPaintProbe : public QObject {
  public:
    explicit FirstPaintProbe(const QElapsedTimer& since_main) : since_main_(since_main) {}

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Paint && !reported_) {
            reported_ = true;
            std::printf("window_painted_ms since_process_start=%lld since_main=%lld\n",
                        ms_since_process_start(), static_cast<long long>(since_main_.elapsed()));
            std::fflush(stdout);
            QTimer::singleShot(0, qApp, &QCoreApplication::quit);
        }
        return QObject::eventFilter(watched, event);
    }

  private:
    const QElapsedTimer& since_main_;
    bool reported_ = false;
};

// Why the window cannot open here, or null: without a display Qt's default platform aborts
// the program. QT_QPA_PLATFORM (offscreen, xcb, wayland) is the user's choice and left to Qt.
const char* missing_display() {
    const auto set = [](const char* name) {
        const char* value = std::getenv(name);
        return value != nullptr && *value != '\0';
    };
    if (set("QT_QPA_PLATFORM") || set("DISPLAY") || set("WAYLAND_DISPLAY"))
        return nullptr;
    return "no display to open the window on (DISPLAY is not set): run it in a desktop "
           "session, under xvfb-run, or use scalelab-cli train";
}

}  // namespace

int main(int argc, char** argv) {
    scalelab::return_large_blocks_to_the_system();
    QElapsedTimer since_start;
    since_start.start();

    // --help and --version are answered before the window's application exists, which aborts
    // without a display; the other flags are read once it has taken Qt's own (-geometry).
    QCoreApplication::setApplicationName(QStringLiteral("ScaleLab"));
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleLab"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SCALELAB_VERSION));
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("ScaleLab: design data-parallel training runs, watch them side by side."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption config({QStringLiteral("c"), QStringLiteral("config")},
                                    QStringLiteral("Load this experiment (the JSON file "
                                                   "scalelab-cli train --config reads) into the "
                                                   "form; may be given several times."),
                                    QStringLiteral("file"));
    const QCommandLineOption theme(QStringLiteral("theme"),
                                   QStringLiteral("Colour theme: light or dark."),
                                   QStringLiteral("name"), QStringLiteral("light"));
    const QCommandLineOption presenter(QStringLiteral("presenter"),
                                       QStringLiteral("Start in presenter mode (F11)."));
    const QCommandLineOption quit_after_paint(
        QStringLiteral("quit-after-first-paint"),
        QStringLiteral("Print the milliseconds until the window is painted, then quit "
                       "(startup benchmark)."));
    const QCommandLineOption start(
        QStringLiteral("start"), QStringLiteral("Start the experiment (each --config's) at once."));
    const QCommandLineOption store(
        QStringLiteral("store"),
        QStringLiteral("Keep runs in this run store (an SQLite file, shared with scalelab-cli "
                       "train --store). Default: %1")
            .arg(scalelab::RunStore::default_path()),
        QStringLiteral("file"));
    const QCommandLineOption no_store(
        QStringLiteral("no-store"),
        QStringLiteral("Keep this session's runs in memory only (open a store later from the "
                       "File menu)."));
    const QCommandLineOption lesson(
        QStringLiteral("lesson"),
        QStringLiteral("Open a lesson: its number in the Lessons menu, or a lesson file. With "
                       "--start, run it."),
        QStringLiteral("number|file"));
    parser.addOptions({config, theme, presenter, start, store, no_store, lesson, quit_after_paint});
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    parser.parse(arguments);  // Qt's own options are unknown here: process() below says the rest
    if (parser.isSet(QStringLiteral("help"))) {
        // Without an application object Qt cannot name the program itself.
        std::fputs(qPrintable(parser.helpText().replace(QStringLiteral("<executable_name>"),
                                                        QStringLiteral("scalelab"))),
                   stdout);
        return 0;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("scalelab %s\n", SCALELAB_VERSION);
        return 0;
    }
    if (const char* problem = missing_display()) {
        std::fprintf(stderr, "scalelab: %s\n", problem);
        return 2;
    }
    QApplication app(argc, argv);
    parser.process(app);

    const QString theme_name = parser.value(theme);
    if (theme_name != QStringLiteral("light") && theme_name != QStringLiteral("dark")) {
        std::fprintf(stderr, "scalelab: --theme must be light or dark, not '%s'\n",
                     qPrintable(theme_name));
        return 2;
    }
    if (parser.isSet(store) && parser.isSet(no_store)) {
        std::fprintf(stderr, "scalelab: give --store FILE or --no-store, not both\n");
        return 2;
    }

    const scalelab::DeviceInventory devices = scalelab::discover_devices();
    scalelab::RunController controller;
    scalelab::RunCollection runs(controller);
    scalelab::MainWindow window(runs, devices);
    window.setTheme(theme_name == QStringLiteral("dark") ? scalelab::Theme::Dark
                                                         : scalelab::Theme::Light);

    FirstPaintProbe probe(since_start);
    if (parser.isSet(quit_after_paint))
        window.installEventFilter(&probe);

    window.show();
    // The window as it was left (size, split, theme unless --theme, the experiment), restored
    // once it is laid out, and kept at quit. The bench flag starts from the defaults, as on a
    // fresh machine.
    QSettings settings;
    if (!parser.isSet(quit_after_paint)) {
        scalelab::restore_window_settings(window, settings, parser.isSet(theme));
        QObject::connect(&app, &QCoreApplication::aboutToQuit, &window,
                         [&] { scalelab::save_window_settings(window, settings); });
    }
    // A store that cannot be opened is explained in a dialog over the window, which offers
    // another file, a new store, or going on without one.
    if (!parser.isSet(no_store))
        window.openStore(parser.isSet(store) ? parser.value(store)
                                             : scalelab::RunStore::default_path());
    if (parser.isSet(presenter))
        window.setPresenterMode(true);
    // Each --config is loaded into the form in turn and, with --start, started as its own run,
    // so that several experiments can be opened side by side in one go. A file that cannot be
    // loaded is reported and not started.
    for (const QString& path : parser.values(config)) {
        QString error;
        if (!window.form().loadConfig(path, &error)) {
            QMessageBox::warning(&window, QStringLiteral("Cannot open the experiment"), error);
            continue;
        }
        if (parser.isSet(start))
            window.startRun();
    }
    if (parser.isSet(lesson)) {
        const scalelab::LessonEntry entry = scalelab::find_lesson(parser.value(lesson), devices);
        if (!entry.lesson) {
            QMessageBox::warning(&window, QStringLiteral("Cannot open the lesson"), entry.error);
        } else {
            window.openLesson(*entry.lesson);
            if (parser.isSet(start))
                window.runLesson();
        }
    }
    if (parser.isSet(start) && !parser.isSet(config) && !parser.isSet(lesson))
        window.startRun();
    return app.exec();
}
