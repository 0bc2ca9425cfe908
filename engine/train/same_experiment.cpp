#include "train/same_experiment.h"

#include <vector>

#include "train/spec_fields.h"

namespace scalelab {

namespace {

constexpr int max_named_differences = 5;

std::string process_name(int index, const std::vector<std::string>& hosts) {
    return "process " + std::to_string(index) + " (host " + hosts[std::size_t(index)] + ")";
}

}  // namespace

std::string experiment_mismatch(comm::ProcessGroup& processes, const RunSpec& spec) {
    const std::vector<std::string> hosts = processes.all_gather_text(processes.host());
    std::string mismatch;
    int named = 0;
    for (const SpecField& field : spec_fields()) {
        const std::vector<std::string> values =
            processes.all_gather_text(field_value_text(field, spec));
        for (std::size_t p = 1; p < values.size(); ++p) {
            if (values[p] == values.front())
                continue;
            if (named++ < max_named_differences) {
                const std::string key(field.key);
                mismatch += (mismatch.empty() ? "" : "\n") + process_name(int(p), hosts) +
                            " was started with " + key + " " + values[p] + ", " +
                            process_name(0, hosts) + " with " + key + " " + values.front();
            }
            break;  // one line a field: the first process that differs from process 0
        }
    }
    if (named > max_named_differences)
        mismatch +=
            "\n... and " + std::to_string(named - max_named_differences) + " more settings differ";
    return mismatch;
}

}  // namespace scalelab
