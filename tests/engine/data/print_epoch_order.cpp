// Prints one rank's epoch order as data::EpochSampler computes it, the indices separated by
// spaces, for tests/engine/data/check_epoch_order.py to compare with its Python port.
// Usage: print_epoch_order COUNT SEED RANKS RANK EPOCH

#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/sampler.h"

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: print_epoch_order COUNT SEED RANKS RANK EPOCH\n");
        return 2;
    }
    const scalelab::data::EpochSampler sampler(std::stoull(argv[1]), std::stoull(argv[2]),
                                               std::stoi(argv[3]), std::stoi(argv[4]));
    std::string line;
    for (const std::uint32_t index : sampler.indices(std::stoi(argv[5])))
        line += std::to_string(index) + " ";
    std::puts(line.c_str());
    return 0;
}
