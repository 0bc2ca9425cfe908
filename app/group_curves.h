#pragma once

#include <QString>
#include <QStringList>

#include <span>
#include <vector>

namespace scalelab {

// What a group's band spans around its mean curve: nothing, the mean plus and minus one sample
// standard deviation of the members (n - 1, as spread_of()), or the members' lowest to highest.
enum class GroupBand { Off, StdDev, MinMax };

// One member's curve on the chart's x axis: x never decreasing, one y per x.
struct MemberCurve {
    std::span<const double> xs;
    std::span<const double> ys;
};

// A group's curve: at each x, the members' mean and the band around it (low = high = mean with
// GroupBand::Off, and wherever only one member is given).
struct GroupCurve {
    std::vector<double> xs;
    std::vector<double> mean;
    std::vector<double> low;
    std::vector<double> high;
};

// The mean and band of `members` where every one of them has data: from the largest of their
// first x to the smallest of their last x. Beyond it a mean would average a changing set of
// members and jump where one ends (a member still training, or one that diverged and stopped),
// so the curve ends there instead. Its xs are every member's x inside that range (each once);
// a member without a point at an x contributes its value interpolated linearly between its
// neighbours: y = y0 + (y1 - y0) (x - x0) / (x1 - x0).
//
// Empty when a member has no points or the ranges do not overlap. A non-finite y (a diverged
// step) makes the mean and band at the xs it touches non-finite: charts leave those points out.
GroupCurve group_curve(std::span<const MemberCurve> members, GroupBand band);

// The name charts give a group of runs named `names` (a group's id is a UUID): what the names
// share (run_group.h shared_name), then the count: "resnet8 batch 256 seed 1" .. "seed 5" make
// "resnet8 batch 256 (5 seeds)".
QString group_legend(const QStringList& names);

}  // namespace scalelab
