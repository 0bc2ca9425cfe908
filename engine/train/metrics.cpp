#include "train/metrics.h"

namespace scalelab {

std::string_view to_string(RunStatus status) {
    switch (status) {
        case RunStatus::Finished:
            return "finished";
        case RunStatus::ReachedTarget:
            return "reached_target";
        case RunStatus::Diverged:
            return "diverged";
        case RunStatus::Cancelled:
            return "cancelled";
        case RunStatus::Failed:
            return "failed";
    }
    return "failed";
}

}  // namespace scalelab
