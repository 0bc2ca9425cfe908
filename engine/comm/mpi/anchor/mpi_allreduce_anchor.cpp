// The anchor of `scalelab-cli bench allreduce` across processes: MPI's own MPI_Allreduce (in
// place, float sum) of the same sizes, timed the way the benchmark times ScaleLab's (a barrier,
// then the all-reduce; the slowest process's time; the median of the timed iterations after a
// warm-up), printed in the same columns. --nonblocking: MPI_Iallreduce then MPI_Wait, the call
// ScaleLab's exchange makes. Usage:
//   mpirun -np 2 scalelab-mpi-allreduce-anchor [--nonblocking] [bytes ...]   (default 1M 16M 64M)

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int warmup_iterations = 5;
constexpr int timed_iterations = 20;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Seconds of one all-reduce of the buffer, as the slowest process took it.
double timed_allreduce(std::vector<float>& buffer, bool nonblocking) {
    std::fill(buffer.begin(), buffer.end(), 1.0F);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (nonblocking) {
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Iallreduce(MPI_IN_PLACE, buffer.data(), int(buffer.size()), MPI_FLOAT, MPI_SUM,
                       MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, buffer.data(), int(buffer.size()), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
    }
    double seconds = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return seconds;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool nonblocking = false;
    std::vector<std::size_t> sizes;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--nonblocking")
            nonblocking = true;
        else
            sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    }
    if (sizes.empty())
        sizes = {std::size_t(1) << 20, std::size_t(16) << 20, std::size_t(64) << 20};
    if (rank == 0)
        std::printf("%8s %12s %10s %11s %11s  (%s)\n", "devices", "bytes", "time ms", "algbw GB/s",
                    "busbw GB/s", nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce");
    for (const std::size_t bytes : sizes) {
        std::vector<float> buffer(bytes / sizeof(float));
        std::vector<double> seconds;
        for (int i = 0; i < warmup_iterations + timed_iterations; ++i) {
            const double took = timed_allreduce(buffer, nonblocking);
            if (i >= warmup_iterations)
                seconds.push_back(took);
        }
        // nccl-tests' definitions, as AllReduceRow: algbw = bytes / time, busbw = algbw x
        // 2 (n - 1) / n.
        const double time_s = median(seconds);
        const double algbw = double(buffer.size() * sizeof(float)) / time_s / 1e9;
        if (rank == 0)
            std::printf("%8d %12zu %10.3f %11.2f %11.2f\n", size, buffer.size() * sizeof(float),
                        time_s * 1e3, algbw, algbw * 2.0 * (size - 1) / size);
    }
    MPI_Finalize();
    return 0;
}
