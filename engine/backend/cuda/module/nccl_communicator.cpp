#include "backend/cuda/module/nccl_communicator.h"

#include <cuda.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/module/library_errors.h"
#include "backend/cuda/module/stream_fence.h"
#include "backend/cuda/module/vector_ops.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

// How often the watchdog looks at the communicators: a failure or a timeout ends the group
// within this much of happening, and 20 polls a second cost nothing next to a training step.
constexpr std::chrono::milliseconds kWatchdogPeriod{50};

// How long abort waits for a rank to come out of an NCCL call before freeing its communicator
// anyway. An enqueue takes microseconds; one that takes longer is waiting on the host for its
// peers (where NCCL connects GPUs lazily, inside the first collective that needs a connection:
// see connect_at_init), and only NCCL's own abort flag, which ncclCommAbort raises, can release
// it.
constexpr std::chrono::seconds kEnqueueGrace{5};

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// "rank 1 (GPU 3)", for messages.
std::string rank_text(std::size_t rank, int gpu) {
    return "rank " + std::to_string(rank) + " (GPU " + std::to_string(gpu) + ")";
}

std::string seconds_text(double seconds) {
    std::ostringstream text;
    text << seconds << " s";
    return text.str();
}

// NCCL connects the GPUs of a communicator lazily by default (NCCL_RUNTIME_CONNECT=1, since
// 2.22): each algorithm's connections, and their buffers' cudaMalloc, are made inside the first
// collective that uses that algorithm, while other ranks' collectives may be running, which is
// what allocating everything before the first step avoids (the cudaMalloc/NCCL deadlock; see
// Replica::prepare). NCCL_RUNTIME_CONNECT=0 has ncclCommInitAll connect every algorithm instead.
// Set once per process, before NCCL first reads its parameters (at its first initialisation),
// and only where the user has not set it.
void connect_at_init() {
    static std::once_flag once;
    std::call_once(once, [] { setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0); });
}

// Whether this thread has a CUDA context current, i.e. has used a GPU. The runtime cannot tell:
// cudaGetDevice says 0 on a thread that never chose a GPU. The driver's cuCtxGetCurrent can, and
// the runtime hands out its entry point, so the module needs no link to libcuda. Where it cannot
// be had, a context is assumed.
bool thread_has_context() {
    using CtxGetCurrent = CUresult (*)(CUcontext*);
    static const CtxGetCurrent get_current = [] {
        void* entry = nullptr;
        cudaDriverEntryPointQueryResult found{};
        // The call that names the version came with CUDA 12.5 and the other is deprecated since.
#if CUDART_VERSION >= 12050
        const cudaError_t status = cudaGetDriverEntryPointByVersion(
            "cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &found);
#else
        const cudaError_t status =
            cudaGetDriverEntryPoint("cuCtxGetCurrent", &entry, cudaEnableDefault, &found);
#endif
        const bool ok = status == cudaSuccess && found == cudaDriverEntryPointSuccess;
        return ok ? reinterpret_cast<CtxGetCurrent>(entry) : CtxGetCurrent{nullptr};
    }();
    CUcontext current = nullptr;
    return get_current == nullptr || (get_current(&current) == CUDA_SUCCESS && current != nullptr);
}

// Lets a scope make GPUs current on this thread, then makes the one that was current again:
// group creation and destruction run on the creator's thread, which may have a GPU of its own.
// A thread that had none is left with whichever the scope chose last: "restoring" GPU 0 there
// would create a context on GPU 0 (hundreds of MB), whether the group uses it or not.
class DeviceRestorer {
  public:
    DeviceRestorer() {
        if (thread_has_context())
            cudaGetDevice(&previous_);
    }
    ~DeviceRestorer() {
        if (previous_ >= 0)
            cudaSetDevice(previous_);
    }
    DeviceRestorer(const DeviceRestorer&) = delete;
    DeviceRestorer& operator=(const DeviceRestorer&) = delete;

  private:
    int previous_ = -1;  // none
};

// Marks a rank's collective in flight for the watchdog while it lives, unless handed on: a
// collective started by one call and finished by another (start_collective, finish_collective)
// keeps its mark until the InFlight that adopts it is destroyed.
class InFlight {
  public:
    InFlight(std::atomic<std::int64_t>& since_ns, std::atomic<const char*>& name,
             std::atomic<bool>& behind_fence, const char* what, bool after_fence)
        : since_ns_(&since_ns) {
        name.store(what, std::memory_order_relaxed);
        behind_fence.store(after_fence, std::memory_order_relaxed);
        since_ns_->store(now_ns(), std::memory_order_release);
    }
    // The mark of a collective whose start handed it on.
    explicit InFlight(std::atomic<std::int64_t>& since_ns) : since_ns_(&since_ns) {}
    ~InFlight() {
        if (since_ns_ != nullptr)
            since_ns_->store(0, std::memory_order_release);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

    void hand_on() { since_ns_ = nullptr; }

  private:
    std::atomic<std::int64_t>* since_ns_;
};

}  // namespace

// ---- NcclGroup ----

std::shared_ptr<NcclGroup> NcclGroup::create(const GpuGroupOptions& options) {
    check_nccl_group_options(options);
    // From here on the destructor releases whatever exists if a step throws.
    auto group = std::make_shared<NcclGroup>(Private{}, options);
    group->create_rank_resources();
    group->watchdog_ = std::thread(&NcclGroup::watch, group.get());
    group->connect_ranks();
    return group;
}

NcclGroup::NcclGroup(Private, const GpuGroupOptions& options)
    : options_(options),
      global_ranks_(options.unique_id.empty() ? int(options.gpus.size()) : options.ranks),
      ranks_(options.gpus.size()) {
    for (std::size_t r = 0; r < ranks_.size(); ++r)
        ranks_[r].gpu = options.gpus[r];
}

NcclGroup::~NcclGroup() {
    {
        std::lock_guard lock(watchdog_mutex_);
        watchdog_stop_ = true;
    }
    watchdog_wake_.notify_all();
    if (watchdog_.joinable())
        watchdog_.join();
    {
        // No rank is left (each communicator holds the group), and every rank waited for its
        // last collective, so nothing is in flight: ncclCommDestroy does not wait on anything.
        std::lock_guard lock(comms_mutex_);
        if (!comms_released_) {
            comms_released_ = true;
            DeviceRestorer restore;
            // An intra-node collective of NCCL's, like ncclCommAbort: one group for all.
            ncclGroupStart();
            for (Rank& rank : ranks_)
                if (rank.comm != nullptr)
                    ncclCommDestroy(rank.comm);
            ncclGroupEnd();
        }
    }
    release_rank_resources();
}

void NcclGroup::create_rank_resources() {
    DeviceRestorer restore;
    connect_at_init();
    init_communicators();
    for (Rank& rank : ranks_) {
        check_cuda(cudaSetDevice(rank.gpu), "cudaSetDevice");
        check_cuda(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
        const unsigned int blocking = cudaEventBlockingSync;
        check_cuda(cudaEventCreateWithFlags(&rank.done, blocking | cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
        check_cuda(cudaEventCreateWithFlags(&rank.timing_start, blocking),
                   "cudaEventCreateWithFlags");
        check_cuda(cudaEventCreateWithFlags(&rank.timing_stop, blocking),
                   "cudaEventCreateWithFlags");
        void* value = nullptr;
        check_cuda(cudaMalloc(&value, sizeof(float)), "cudaMalloc of the barrier's float");
        rank.barrier_value = static_cast<float*>(value);
        // On the communication stream, so that it is ordered before the first barrier.
        check_cuda(cudaMemsetAsync(value, 0, sizeof(float), rank.stream), "cudaMemsetAsync");
    }
}

void NcclGroup::init_communicators() {
    if (options_.unique_id.empty()) {
        std::vector<ncclComm_t> comms(ranks_.size(), nullptr);
        check_nccl(ncclCommInitAll(comms.data(), local_ranks(), options_.gpus.data()),
                   "ncclCommInitAll");
        for (std::size_t r = 0; r < ranks_.size(); ++r)
            ranks_[r].comm = comms[r];
        return;
    }
    // Across processes, as llm.c and nccl-tests do: one id from rank 0, and this process's GPUs
    // joined in one NCCL group (one thread drives several GPUs). Collective across processes:
    // it returns once every rank has joined.
    ncclUniqueId id;
    std::copy(options_.unique_id.begin(), options_.unique_id.end(), id.internal);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    ncclResult_t result = ncclSuccess;
    for (std::size_t r = 0; r < ranks_.size() && result == ncclSuccess; ++r) {
        check_cuda(cudaSetDevice(ranks_[r].gpu), "cudaSetDevice");
        result = ncclCommInitRank(&ranks_[r].comm, global_ranks_, id, options_.first_rank + int(r));
    }
    const ncclResult_t ended = ncclGroupEnd();
    check_nccl(result, "ncclCommInitRank");
    check_nccl(ended, "ncclGroupEnd");
}

void NcclGroup::connect_ranks() {
    // One thread drives every GPU here, so the all-reduces are one NCCL group (NCCL's rule for
    // several GPUs from one thread). The ranks' enqueue locks keep abort from freeing the
    // communicators while NCCL is inside the calls; the in-flight marks let the watchdog end a
    // connection that never completes.
    std::vector<std::unique_lock<std::timed_mutex>> locks;
    std::vector<std::unique_ptr<InFlight>> in_flight;
    for (Rank& rank : ranks_) {
        locks.emplace_back(rank.enqueue_mutex);
        in_flight.push_back(std::make_unique<InFlight>(rank.in_flight_since_ns, rank.in_flight_name,
                                                       rank.in_flight_behind_fence, "connection",
                                                       false));
    }
    std::string failure;
    {
        DeviceRestorer restore;
        ncclResult_t result = ncclGroupStart();
        if (result == ncclSuccess) {
            for (Rank& rank : ranks_)
                if (result == ncclSuccess)
                    result = ncclAllReduce(rank.barrier_value, rank.barrier_value, 1, ncclFloat32,
                                           ncclSum, rank.comm, rank.stream);
            const ncclResult_t ended = ncclGroupEnd();
            if (result == ncclSuccess)
                result = ended;
        }
        if (result != ncclSuccess)
            failure = nccl_error(result, "ncclAllReduce").what();
        for (Rank& rank : ranks_)
            if (const cudaError_t recorded = cudaEventRecord(rank.done, rank.stream);
                failure.empty() && recorded != cudaSuccess)
                failure = cuda_error(recorded, "cudaEventRecord").what();
    }
    locks.clear();
    if (failure.empty())
        for (Rank& rank : ranks_)
            if (const cudaError_t waited = cudaEventSynchronize(rank.done);
                failure.empty() && waited != cudaSuccess)
                failure = cuda_error(waited, "connecting the GPUs").what();
    in_flight.clear();
    if (failure.empty() && !aborted())
        return;
    // Aborted first, so that the destructor does not wait on kernels that never finish.
    abort("NCCL could not connect the GPUs: " + failure);
    std::string reason;
    {
        std::lock_guard lock(state_mutex_);
        reason = reason_;
    }
    throw Error(ErrorKind::Internal, reason);
}

void NcclGroup::release_rank_resources() noexcept {
    DeviceRestorer restore;
    for (Rank& rank : ranks_) {
        if (rank.stream == nullptr && rank.barrier_value == nullptr)
            continue;
        cudaSetDevice(rank.gpu);
        // Destructors cannot report: a failure here means the GPU's context is already gone.
        if (rank.done != nullptr)
            cudaEventDestroy(rank.done);
        if (rank.timing_start != nullptr)
            cudaEventDestroy(rank.timing_start);
        if (rank.timing_stop != nullptr)
            cudaEventDestroy(rank.timing_stop);
        if (rank.stream != nullptr)
            cudaStreamDestroy(rank.stream);
        if (rank.barrier_value != nullptr)
            cudaFree(rank.barrier_value);
    }
}

std::unique_ptr<comm::Communicator> NcclGroup::communicator(int rank) {
    return nccl_communicator(rank);
}

std::unique_ptr<NcclCommunicator> NcclGroup::nccl_communicator(int rank) {
    if (rank < 0 || rank >= local_ranks())
        throw std::invalid_argument("rank " + std::to_string(rank) + " is not in a group of " +
                                    std::to_string(local_ranks()) + " GPUs");
    {
        // One live communicator per rank: two would make NCCL calls on one communicator from
        // two threads.
        std::lock_guard lock(state_mutex_);
        Rank& state = ranks_[static_cast<std::size_t>(rank)];
        if (state.handed_out)
            throw std::logic_error("rank " + std::to_string(rank) +
                                   " of the GPU group already has a communicator: destroy it "
                                   "before asking for another");
        state.handed_out = true;
    }
    try {
        return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(shared_from_this(), rank));
    } catch (...) {
        release_handout(rank);
        throw;
    }
}

void NcclGroup::release_handout(int rank) {
    std::lock_guard lock(state_mutex_);
    ranks_[static_cast<std::size_t>(rank)].handed_out = false;
}

void NcclGroup::abort(const std::string& reason) {
    {
        std::lock_guard lock(state_mutex_);
        if (aborted_.load(std::memory_order_relaxed))
            return;  // the first reason is the one every rank reports
        reason_ = reason;
        aborted_.store(true, std::memory_order_release);
    }
    abort_communicators();
}

void NcclGroup::abort_communicators() noexcept {
    // Every rank that is inside an NCCL call comes out of it before its communicator is freed
    // (a rank checks the abort flag, set above, under its lock before each call, so once the
    // lock is ours it makes no further call). See kEnqueueGrace for the rank that does not.
    // One grace period for the whole group, not one per rank: while connect_ranks holds every
    // rank's lock, a per-rank wait would delay the abort by kEnqueueGrace times the GPUs.
    const auto deadline = std::chrono::steady_clock::now() + kEnqueueGrace;
    std::vector<std::unique_lock<std::timed_mutex>> held;
    held.reserve(ranks_.size());
    for (Rank& rank : ranks_) {
        std::unique_lock lock(rank.enqueue_mutex, std::defer_lock);
        if (lock.try_lock_until(deadline))
            held.push_back(std::move(lock));
    }
    std::lock_guard lock(comms_mutex_);
    if (comms_released_)
        return;
    comms_released_ = true;
    DeviceRestorer restore;
    // Raises NCCL's abort flag, which its kernels poll: each stuck kernel returns, so the done
    // events fire and the waiting ranks wake. One NCCL group: abort is an intra-node collective.
    // Its result is not checked: the group is over either way, and this runs on the watchdog
    // or in the middle of another error.
    ncclGroupStart();
    for (Rank& rank : ranks_)
        if (rank.comm != nullptr)
            ncclCommAbort(rank.comm);
    ncclGroupEnd();
}

void NcclGroup::throw_aborted() const {
    std::string reason;
    {
        std::lock_guard lock(state_mutex_);
        reason = reason_;
    }
    throw comm::Aborted(reason);
}

void NcclGroup::start_collective(int rank_index, const char* name, const char* call,
                                 const Enqueue& enqueue, cudaEvent_t after, bool timed,
                                 cudaEvent_t done) {
    Rank& rank = ranks_[static_cast<std::size_t>(rank_index)];
    // The timing events bracket what follows the fence: the watchdog tells from the first one
    // whether the collective has started on the GPU.
    if (after != nullptr && !timed)
        throw std::logic_error("a collective behind a fence is timed (see watchdog_problem)");
    InFlight in_flight(rank.in_flight_since_ns, rank.in_flight_name, rank.in_flight_behind_fence,
                       name, after != nullptr);

    // Step 1: enqueue, under the rank's lock (see the class comment).
    ncclResult_t result = ncclSuccess;
    cudaError_t status = cudaSuccess;
    const char* failed_call = call;
    {
        std::lock_guard lock(rank.enqueue_mutex);
        if (aborted())
            throw_aborted();
        // The rank's thread works on its rank's GPU (its backend made it current already).
        status = cudaSetDevice(rank.gpu);
        failed_call = "cudaSetDevice";
        if (status == cudaSuccess && after != nullptr) {
            status = cudaStreamWaitEvent(rank.stream, after, 0);
            failed_call = "cudaStreamWaitEvent";
        }
        if (status == cudaSuccess && timed) {
            status = cudaEventRecord(rank.timing_start, rank.stream);
            failed_call = "cudaEventRecord";
        }
        if (status == cudaSuccess) {
            result = enqueue(rank.comm, rank.stream);
            failed_call = call;
        }
        if (status == cudaSuccess && result == ncclSuccess) {
            status = cudaEventRecord(timed ? rank.timing_stop : rank.done, rank.stream);
            failed_call = "cudaEventRecord";
        }
        if (status == cudaSuccess && result == ncclSuccess && done != nullptr) {
            status = cudaEventRecord(done, rank.stream);
            failed_call = "cudaEventRecord";
        }
    }
    if (result != ncclSuccess || status != cudaSuccess) {
        if (aborted())
            throw_aborted();
        const Error error = result != ncclSuccess ? nccl_error(result, failed_call)
                                                  : cuda_error(status, failed_call);
        // The other ranks would wait for this one forever: end the group for them.
        abort(rank_text(std::size_t(first_rank() + rank_index), rank.gpu) +
              " could not start its " + name + ": " + error.what());
        throw error;
    }
    in_flight.hand_on();  // to finish_collective
}

float NcclGroup::finish_collective(int rank_index, const char* name, const char* call, bool timed) {
    Rank& rank = ranks_[static_cast<std::size_t>(rank_index)];
    const InFlight in_flight(rank.in_flight_since_ns);  // start_collective's mark, cleared here

    // Step 2: wait, sleeping (blocking-sync event), with no lock held.
    const cudaError_t waited = cudaEventSynchronize(timed ? rank.timing_stop : rank.done);

    // Step 3: an abort while waiting means the kernels quit early; the data is not a result.
    if (aborted())
        throw_aborted();
    if (waited != cudaSuccess) {
        const Error error = cuda_error(waited, std::string(call) + " on the GPU");
        abort(rank_text(std::size_t(first_rank() + rank_index), rank.gpu) + "'s " + name +
              " failed: " + error.what());
        throw error;
    }
    if (!timed)
        return 0.0f;
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, rank.timing_start, rank.timing_stop),
               "cudaEventElapsedTime");
    return ms;
}

float NcclGroup::run_collective(int rank, const char* name, const char* call,
                                const Enqueue& enqueue, cudaEvent_t after, bool timed) {
    start_collective(rank, name, call, enqueue, after, timed, /*done=*/nullptr);
    return finish_collective(rank, name, call, timed);
}

std::string NcclGroup::watchdog_problem() {
    {
        std::lock_guard lock(comms_mutex_);
        if (comms_released_)
            return {};
        for (std::size_t r = 0; r < ranks_.size(); ++r) {
            const Rank& rank = ranks_[r];
            if (rank.comm == nullptr)
                continue;
            ncclResult_t async_error = ncclSuccess;
            const ncclResult_t asked = ncclCommGetAsyncError(rank.comm, &async_error);
            if (asked != ncclSuccess)
                async_error = asked;
            // ncclInProgress: a non-blocking operation still being set up, not an error.
            if (async_error == ncclSuccess || async_error == ncclInProgress)
                continue;
            std::string what = ncclGetErrorString(async_error);
            if (const char* last = ncclGetLastError(rank.comm); last != nullptr && *last != '\0')
                what += std::string(" (") + last + ")";
            return "NCCL failed on " + rank_text(std::size_t(first_rank()) + r, rank.gpu) + ": " +
                   what +
                   "; the GPU group's collectives were stopped. Check the GPUs and their links "
                   "(nvidia-smi; NCCL_DEBUG=WARN prints NCCL's own account), then start again";
        }
    }
    const std::int64_t now = now_ns();
    // Compared in double: a timeout of more than ~292 years would overflow (undefined
    // behaviour) as int64 nanoseconds, and check_nccl_group_options only bounds it below.
    const double timeout_ns = options_.timeout_seconds * 1e9;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
        Rank& rank = ranks_[r];
        std::int64_t since = rank.in_flight_since_ns.load(std::memory_order_acquire);
        if (since == 0)
            continue;
        // A bucket's all-reduce waits on its stream for the rest of backward
        // (start_all_reduce_after): until its first timing event has passed it has not started,
        // and its clock restarts (unless the rank has finished it meanwhile: then the exchange
        // fails, nothing changes).
        if (rank.in_flight_behind_fence.load(std::memory_order_relaxed) &&
            cudaSetDevice(rank.gpu) == cudaSuccess &&
            cudaEventQuery(rank.timing_start) == cudaErrorNotReady) {
            rank.in_flight_since_ns.compare_exchange_strong(since, now, std::memory_order_acq_rel);
            continue;
        }
        if (static_cast<double>(now - since) <= timeout_ns)
            continue;
        return rank_text(std::size_t(first_rank()) + r, rank.gpu) +
               " waited longer than the GPU group's timeout of " +
               seconds_text(options_.timeout_seconds) + " in its " +
               rank.in_flight_name.load(std::memory_order_relaxed) +
               " and it did not finish (another rank never joined it, having stopped, hung or "
               "called a different collective, or a GPU or link hung), so the group's "
               "collectives were stopped";
    }
    return {};
}

void NcclGroup::watch() {
    std::unique_lock lock(watchdog_mutex_);
    while (!watchdog_wake_.wait_for(lock, kWatchdogPeriod, [this] { return watchdog_stop_; })) {
        if (aborted())
            continue;  // nothing left to watch; wait to be stopped
        lock.unlock();
        const std::string problem = watchdog_problem();
        if (!problem.empty())
            abort(problem);
        lock.lock();
    }
}

// ---- NcclCommunicator ----

NcclCommunicator::NcclCommunicator(std::shared_ptr<NcclGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {}

NcclCommunicator::~NcclCommunicator() {
    // A started all-reduce's mark would look hung to the watchdog, and the group's destructor
    // could wait on it: a caller that drops one unfinished has left the group in no state to go on.
    if (started_)
        group_->abort("rank " + std::to_string(rank_) +
                      "'s communicator was destroyed with an all-reduce started and not finished");
    group_->release_handout(rank_);
}

void NcclCommunicator::abort(const std::string& reason) {
    group_->abort(reason);
}

void NcclCommunicator::all_reduce(std::span<float> data, comm::ReduceOp op) {
    reduce(data, op, /*timed=*/false);
}

std::optional<double> NcclCommunicator::start_all_reduce_after(Fence& ready, std::span<float> data,
                                                               comm::ReduceOp op, Fence* done) {
    const auto* after = dynamic_cast<const StreamFence*>(&ready);
    if (after == nullptr)
        throw std::logic_error("an NCCL all-reduce can only follow a GPU backend's fence");
    const StreamFence* done_fence = nullptr;
    if (done != nullptr) {
        done_fence = dynamic_cast<const StreamFence*>(done);
        const NcclGroup::Rank& state = group_->ranks_[static_cast<std::size_t>(rank_)];
        if (done_fence == nullptr || done_fence->stream() != state.stream)
            throw std::logic_error("an NCCL all-reduce's done fence is one of its make_fence()");
    }
    require_nothing_started();
    if (data.empty()) {  // no NCCL call: complete already
        if (group_->aborted())
            group_->throw_aborted();
        if (done != nullptr)
            done->mark();
        return 0.0;
    }
    group_->start_collective(rank_, "all_reduce", "ncclAllReduce", all_reduce_call(data, op),
                             after->event(), /*timed=*/true,
                             done_fence != nullptr ? done_fence->event() : nullptr);
    started_ = true;
    return std::nullopt;
}

double NcclCommunicator::finish_all_reduce() {
    if (!std::exchange(started_, false))
        throw std::logic_error(
            "finish_all_reduce without an all-reduce left running by "
            "start_all_reduce_after");
    return group_->finish_collective(rank_, "all_reduce", "ncclAllReduce", /*timed=*/true) / 1000.0;
}

std::unique_ptr<Fence> NcclCommunicator::make_fence() {
    const NcclGroup::Rank& state = group_->ranks_[static_cast<std::size_t>(rank_)];
    return std::make_unique<StreamFence>(state.gpu, state.stream);
}

void NcclCommunicator::require_nothing_started() const {
    if (started_)
        throw std::logic_error("rank " + std::to_string(rank_) +
                               " started an all-reduce it has not finished: call "
                               "finish_all_reduce before its next collective");
}

NcclGroup::Enqueue NcclCommunicator::all_reduce_call(std::span<float> data, comm::ReduceOp op) {
    const ncclRedOp_t nccl_op = op == comm::ReduceOp::Average ? ncclAvg : ncclSum;
    return [data, nccl_op](ncclComm_t comm, cudaStream_t stream) {
        return ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, nccl_op, comm,
                             stream);
    };
}

float NcclCommunicator::timed_all_reduce(std::span<float> data, comm::ReduceOp op) {
    return reduce(data, op, /*timed=*/true);
}

float NcclCommunicator::reduce(std::span<float> data, comm::ReduceOp op, bool timed) {
    require_nothing_started();
    if (data.empty()) {
        if (group_->aborted())
            group_->throw_aborted();
        return 0.0f;
    }
    return group_->run_collective(rank_, "all_reduce", "ncclAllReduce", all_reduce_call(data, op),
                                  /*after=*/nullptr, timed);
}

void NcclCommunicator::broadcast(std::span<float> data, int root) {
    require_nothing_started();
    if (root < 0 || root >= size())
        throw std::logic_error("broadcast from root " + std::to_string(root) + " in a group of " +
                               std::to_string(size()) + " ranks");
    if (data.empty()) {
        if (group_->aborted())
            group_->throw_aborted();
        return;
    }
    group_->run_collective(
        rank_, "broadcast", "ncclBroadcast",
        [&](ncclComm_t comm, cudaStream_t stream) {
            return ncclBroadcast(data.data(), data.data(), data.size(), ncclFloat32, root, comm,
                                 stream);
        },
        /*after=*/nullptr, /*timed=*/false);
}

void NcclCommunicator::all_gather(std::span<const float> in, std::span<float> out) {
    require_nothing_started();
    const std::size_t n = in.size();
    const std::size_t needed = n * static_cast<std::size_t>(size());
    if (out.size() != needed)
        throw std::logic_error("all_gather of " + std::to_string(n) + " floats into " +
                               std::to_string(out.size()) + " (needs size() * " +
                               std::to_string(n) + " = " + std::to_string(needed) + ")");
    if (n == 0) {
        if (group_->aborted())
            group_->throw_aborted();
        return;
    }
    group_->run_collective(
        rank_, "all_gather", "ncclAllGather",
        [&](ncclComm_t comm, cudaStream_t stream) {
            return ncclAllGather(in.data(), out.data(), n, ncclFloat32, comm, stream);
        },
        /*after=*/nullptr, /*timed=*/false);
}

void NcclCommunicator::barrier() {
    require_nothing_started();
    float* value = group_->ranks_[static_cast<std::size_t>(rank_)].barrier_value;
    group_->run_collective(
        rank_, "barrier", "ncclAllReduce",
        [value](ncclComm_t comm, cudaStream_t stream) {
            return ncclAllReduce(value, value, 1, ncclFloat32, ncclSum, comm, stream);
        },
        /*after=*/nullptr, /*timed=*/false);
}

}  // namespace scalelab::cuda
