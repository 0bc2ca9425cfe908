#include "comm/mpi/mpi_job.h"

#include <algorithm>
#include <stdexcept>

namespace scalelab::comm {

namespace {

std::string mpi_error_text(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        return "MPI error " + std::to_string(code);
    return std::string(text, std::size_t(length));
}

// The roll call's messages, on a communicator of their own.
constexpr int question_tag = 1;
constexpr int answer_tag = 2;
// How often the answering thread looks for a question.
constexpr auto answer_period = std::chrono::milliseconds(20);

}  // namespace

MpiJob::MpiJob() {
    int provided = 0;
    // MULTIPLE: a run's threads call MPI at the same time, each on its own duplicate()
    // (the gradient reducer's, synchronised batch norm's), and so does the roll call's.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init");
    if (provided < MPI_THREAD_MULTIPLE)
        throw std::runtime_error(
            "this MPI cannot be called from several threads at once "
            "(MPI_THREAD_MULTIPLE)");
    // Errors come back as codes (turned into exceptions here), never end the program.
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &index_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &count_), "MPI_Comm_size");
    gather_hosts();
    check(MPI_Comm_dup(MPI_COMM_WORLD, &roll_call_), "MPI_Comm_dup");
    answers_.assign(std::size_t(count_), 0);
    answering_ = std::thread([this] { answer_roll_calls(); });
}

std::optional<MpiJob::MpiHold> MpiJob::hold_mpi() {
    MpiHold hold(calls_mutex_);
    if (broken_.load())
        return std::nullopt;
    return hold;
}

void MpiJob::mark_broken() {
    broken_.store(true);
    // Waits for the calls under way; later ones see broken_ under the lock and are not made.
    { std::unique_lock calls(calls_mutex_); }
    stop_answering_.store(true);
    std::lock_guard lock(answering_mutex_);
    if (answering_.joinable())
        answering_.join();
}

MpiJob::~MpiJob() {
    stop_answering_.store(true);
    if (answering_.joinable())
        answering_.join();
    if (broken())
        return;
    MPI_Comm_free(&roll_call_);
    MPI_Finalize();
}

std::string MpiJob::who(int process) const {
    return "process " + std::to_string(process) + " (host " + host(process) + ")";
}

std::string MpiJob::who_am_i() const {
    return "process " + std::to_string(index_) + " of " + std::to_string(count_) + " (host " +
           (hosts_.empty() ? std::string("unknown") : hosts_[std::size_t(index_)]) + ")";
}

void MpiJob::abort(const std::string& reason) {
    std::lock_guard lock(abort_mutex_);
    if (!aborted_.load())
        abort_reason_ = reason.empty() ? "aborted" : reason;
    aborted_.store(true);
}

std::optional<std::string> MpiJob::abort_reason() {
    if (!aborted_.load())
        return std::nullopt;
    std::lock_guard lock(abort_mutex_);
    return abort_reason_;
}

void MpiJob::check(int code, const char* call) {
    if (code != MPI_SUCCESS) {
        mark_broken();
        throw std::runtime_error(who_am_i() + ": " + call + " failed: " + mpi_error_text(code));
    }
}

std::vector<int> MpiJob::silent_processes(std::chrono::milliseconds window) {
    std::lock_guard lock(roll_call_mutex_);
    if (!silent_.empty())
        return silent_;
    // Each roll call has its number, echoed by the answers: a late answer to an earlier one
    // does not count.
    ++round_;
    std::vector<MPI_Request> answers(std::size_t(count_), MPI_REQUEST_NULL);
    std::vector<int> pending;
    {
        const auto hold = hold_mpi();
        if (!hold)
            return silent_;
        for (int p = 0; p < count_; ++p) {
            if (p == index_)
                continue;
            pending.push_back(p);
            ask(p, answers[std::size_t(p)]);
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + window;
    while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const auto hold = hold_mpi();
        if (!hold)
            return silent_;  // broken meanwhile: what was asked is left to MPI
        std::erase_if(pending, [&](int p) { return answered(p, answers[std::size_t(p)]); });
    }
    if (const auto hold = hold_mpi())
        for (const int p : pending)
            if (answers[std::size_t(p)] != MPI_REQUEST_NULL) {
                MPI_Cancel(&answers[std::size_t(p)]);
                MPI_Request_free(&answers[std::size_t(p)]);
            }
    silent_ = pending;
    return silent_;
}

void MpiJob::gather_hosts() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
    std::vector<char> all(std::size_t(MPI_MAX_PROCESSOR_NAME) * std::size_t(count_));
    check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                        MPI_CHAR, MPI_COMM_WORLD),
          "MPI_Allgather");
    for (int p = 0; p < count_; ++p) {
        const char* start = all.data() + std::size_t(p) * MPI_MAX_PROCESSOR_NAME;
        std::string host(start, std::find(start, start + MPI_MAX_PROCESSOR_NAME, '\0'));
        hosts_.push_back(host.empty() ? "unknown" : host);
    }
}

void MpiJob::ask(int p, MPI_Request& answer) {
    if (MPI_Irecv(&answers_[std::size_t(p)], 1, MPI_INT, p, answer_tag, roll_call_, &answer) !=
        MPI_SUCCESS) {
        answer = MPI_REQUEST_NULL;
        return;
    }
    MPI_Request question = MPI_REQUEST_NULL;
    if (MPI_Isend(&round_, 1, MPI_INT, p, question_tag, roll_call_, &question) == MPI_SUCCESS)
        MPI_Request_free(&question);  // sent eagerly; the answer says it arrived
}

bool MpiJob::answered(int p, MPI_Request& answer) {
    if (answer == MPI_REQUEST_NULL)
        return false;
    int done = 0;
    if (MPI_Test(&answer, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done == 0)
        return false;
    if (answers_[std::size_t(p)] == round_)
        return true;
    if (MPI_Irecv(&answers_[std::size_t(p)], 1, MPI_INT, p, answer_tag, roll_call_, &answer) !=
        MPI_SUCCESS)
        answer = MPI_REQUEST_NULL;
    return false;
}

void MpiJob::answer_roll_calls() {
    MPI_Request question = MPI_REQUEST_NULL;
    bool listening = false;
    if (const auto hold = hold_mpi())
        listening = MPI_Irecv(&question_, 1, MPI_INT, MPI_ANY_SOURCE, question_tag, roll_call_,
                              &question) == MPI_SUCCESS;
    while (listening && !stop_answering_.load()) {
        if (!answer_one(question, listening))
            return;  // MPI is broken: nothing may be called, nothing can be answered
        std::this_thread::sleep_for(answer_period);
    }
    if (listening)
        if (const auto hold = hold_mpi()) {
            MPI_Cancel(&question);
            MPI_Request_free(&question);
        }
}

bool MpiJob::answer_one(MPI_Request& question, bool& listening) {
    const auto hold = hold_mpi();
    if (!hold)
        return false;
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&question, &done, &status) != MPI_SUCCESS)
        return false;
    if (done == 0)
        return true;
    echo_ = question_;
    MPI_Request answer = MPI_REQUEST_NULL;
    if (MPI_Isend(&echo_, 1, MPI_INT, status.MPI_SOURCE, answer_tag, roll_call_, &answer) ==
        MPI_SUCCESS)
        MPI_Request_free(&answer);  // sent eagerly; the asker may be gone meanwhile
    listening = MPI_Irecv(&question_, 1, MPI_INT, MPI_ANY_SOURCE, question_tag, roll_call_,
                          &question) == MPI_SUCCESS;
    return true;
}

}  // namespace scalelab::comm
