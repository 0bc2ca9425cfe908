#include "log_relay.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

namespace scalelab {

// Formats each line on the logging thread and posts it to the relay's thread.
class RelaySink final : public spdlog::sinks::base_sink<std::mutex> {
  public:
    explicit RelaySink(LogRelay* relay)
        : base_sink(std::make_unique<spdlog::pattern_formatter>("[%H:%M:%S.%e] [%l] %v")),
          relay_(relay) {}

    // After this returns no thread is inside sink_it_ (it runs under mutex_) and none will
    // touch the relay again.
    void detach() {
        std::lock_guard lock(mutex_);
        relay_ = nullptr;
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
        if (relay_ == nullptr)
            return;
        spdlog::memory_buf_t formatted;
        formatter_->format(message, formatted);
        QString line = QString::fromUtf8(formatted.data(), qsizetype(formatted.size()));
        while (line.endsWith(QLatin1Char('\n')) || line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        const int level = message.level;
        // The relay is the context: if it is destroyed before the event is delivered, Qt drops
        // the event, so the lambda never sees a dead relay.
        LogRelay* relay = relay_;
        QMetaObject::invokeMethod(
            relay, [relay, level, line] { emit relay->lineLogged(level, line); },
            Qt::QueuedConnection);
    }

    void flush_() override {}

  private:
    LogRelay* relay_;  // guarded by mutex_
};

namespace {

// The default logger keeps one distributor for the whole process and relays come and go inside
// it: the distributor adds and removes sinks under its own mutex, safe while other threads log,
// whereas the logger's own sink list is not guarded.
const std::shared_ptr<spdlog::sinks::dist_sink_mt>& relay_distributor() {
    static const auto distributor = std::make_shared<spdlog::sinks::dist_sink_mt>();
    return distributor;
}

void add_distributor_to_default_logger() {
    std::vector<spdlog::sink_ptr>& sinks = spdlog::default_logger()->sinks();
    if (std::find(sinks.begin(), sinks.end(), relay_distributor()) == sinks.end())
        sinks.push_back(relay_distributor());
}

}  // namespace

LogRelay::LogRelay(QObject* parent) : QObject(parent), sink_(std::make_shared<RelaySink>(this)) {
    add_distributor_to_default_logger();
    relay_distributor()->add_sink(sink_);
}

LogRelay::~LogRelay() {
    relay_distributor()->remove_sink(sink_);
    sink_->detach();
}

}  // namespace scalelab
