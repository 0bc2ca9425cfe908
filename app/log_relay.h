#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace scalelab {

class RelaySink;

// Brings the engine's spdlog output to the GUI. While it lives, every line of spdlog's default
// logger (at that logger's level) is formatted on the thread that logs it and handed to this
// object's thread through its event queue, where lineLogged is emitted; a logging thread never
// waits on the GUI.
//
// The constructor attaches to the default logger: create the relay after the default logger is
// set up and before other threads log (it adds a sink to the logger's list, which spdlog does not
// guard). The destructor detaches: lines logged after that, or still queued, are dropped.
class LogRelay : public QObject {
    Q_OBJECT

  public:
    explicit LogRelay(QObject* parent = nullptr);
    ~LogRelay() override;

    LogRelay(const LogRelay&) = delete;
    LogRelay& operator=(const LogRelay&) = delete;

  signals:
    // `level` is an spdlog::level::level_enum (trace 0 ... critical 5); `line` has the time and
    // level in front and no line break at the end.
    void lineLogged(int level, const QString& line);

  private:
    std::shared_ptr<RelaySink> sink_;
};

}  // namespace scalelab
