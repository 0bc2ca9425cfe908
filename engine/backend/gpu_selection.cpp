#include "backend/gpu_selection.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace scalelab {

namespace {

std::string gpu_count_text(std::size_t count) {
    return std::to_string(count) + (count == 1 ? " GPU" : " GPUs");
}

std::string none_usable(std::size_t asked, const DeviceInventory& inventory) {
    return gpu_count_text(asked) +
           " asked for, but no GPU can be used here: " + inventory.no_gpu_reason;
}

// "GPUs 0, 1 and 3" or "GPU 0 only".
std::string present_gpus(const DeviceInventory& inventory) {
    if (inventory.gpus.size() == 1)
        return "GPU " + std::to_string(inventory.gpus.front().index) + " only";
    std::string text = "GPUs ";
    for (std::size_t i = 0; i < inventory.gpus.size(); ++i) {
        if (i > 0)
            text += i + 1 == inventory.gpus.size() ? " and " : ", ";
        text += std::to_string(inventory.gpus[i].index);
    }
    return text;
}

bool has_gpu(const DeviceInventory& inventory, int index) {
    return std::any_of(inventory.gpus.begin(), inventory.gpus.end(),
                       [&](const GpuDescription& gpu) { return gpu.index == index; });
}

}  // namespace

GpuSelection select_first_gpus(int count, const DeviceInventory& inventory) {
    GpuSelection selection;
    if (count < 1) {
        selection.problems.push_back("the number of GPUs must be at least 1 (got " +
                                     std::to_string(count) + ")");
    } else if (inventory.gpus.empty()) {
        selection.problems.push_back(none_usable(std::size_t(count), inventory));
    } else if (std::size_t(count) > inventory.gpus.size()) {
        selection.problems.push_back(gpu_count_text(std::size_t(count)) +
                                     " asked for, but this machine has " +
                                     std::to_string(inventory.gpus.size()) + ": ask for at most " +
                                     std::to_string(inventory.gpus.size()));
    } else {
        for (int i = 0; i < count; ++i)
            selection.indices.push_back(inventory.gpus[std::size_t(i)].index);
    }
    return selection;
}

GpuSelection select_listed_gpus(std::string_view list, const DeviceInventory& inventory) {
    GpuSelection selection;
    if (list.empty()) {
        selection.problems.push_back("the GPU list is empty: list indices such as 0,2");
        return selection;
    }
    std::vector<int> listed;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string_view word = list.substr(start, comma - start);
        int index = -1;
        const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), index);
        if (word.empty() || error != std::errc() || end != word.data() + word.size() || index < 0)
            selection.problems.push_back("'" + std::string(word) + "' in the GPU list '" +
                                         std::string(list) +
                                         "' is not a GPU index: list indices such as 0,2");
        else
            listed.push_back(index);
        start = comma + 1;
    }
    if (!selection.problems.empty())
        return selection;
    return select_gpus(std::move(listed), inventory);
}

GpuSelection select_gpus(std::vector<int> listed, const DeviceInventory& inventory) {
    GpuSelection selection;
    if (inventory.gpus.empty()) {
        selection.problems.push_back(none_usable(listed.size(), inventory));
        return selection;
    }
    for (std::size_t i = 0; i < listed.size(); ++i) {
        const int index = listed[i];
        if (!has_gpu(inventory, index))
            selection.problems.push_back("GPU " + std::to_string(index) +
                                         " does not exist: this machine has " +
                                         present_gpus(inventory));
        else if (std::count(listed.begin(), listed.begin() + std::ptrdiff_t(i), index) == 1)
            selection.problems.push_back("GPU " + std::to_string(index) +
                                         " is listed twice: each GPU runs one device");
    }
    if (selection.problems.empty())
        selection.indices = std::move(listed);
    return selection;
}

}  // namespace scalelab
