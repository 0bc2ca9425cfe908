#!/usr/bin/env python3
"""Draws docs/images/architecture.svg: ScaleLab's three layers and one training step through them,
each box coloured by the thread that runs it (docs/architecture.md explains the picture).

Python 3's standard library only; run it from anywhere after changing what the picture shows:

    python3 scripts/draw_architecture.py            # writes docs/images/architecture.svg
    python3 scripts/draw_architecture.py OUT.svg
"""

import pathlib
import sys
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 1120, 850
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# The threads, as the legend names them, with their colours (outline, fill).
THREADS = {
    "gui": ("GUI thread (Qt event loop)", "#1f5fa8", "#e3eefa"),
    "controller": ("run controller's thread, or scalelab-cli's main thread", "#6a3d9a", "#efe6f7"),
    "device": ("device worker thread, one per device", "#1b7a3a", "#e3f4e8"),
    "loader": ("batch loader's prefetch thread, one per device", "#b35900", "#fdeedd"),
    "comm": ("gradient reducer's communication thread, one per device", "#b01c2e", "#fbe3e6"),
    "writer": ("run recorder's writer thread", "#555555", "#ececec"),
    "none": ("(no thread of its own: code, files, libraries)", "#888888", "#ffffff"),
}

out = []


def text(x, y, s, size=12, weight="normal", anchor="start", colour="#222222", style="normal"):
    out.append(
        f'<text x="{x}" y="{y}" font-family="{FONT}" font-size="{size}" font-weight="{weight}" '
        f'font-style="{style}" text-anchor="{anchor}" fill="{colour}">{escape(s)}</text>'
    )


def box(x, y, w, h, thread, title, lines=(), dashed=False):
    """A box whose outline and fill say which thread runs it; returns its centre and edges."""
    _, stroke, fill = THREADS[thread]
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    out.append(
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{stroke}" '
        f'stroke-width="2"{dash}/>'
    )
    text(x + w / 2, y + 18, title, size=13, weight="bold", anchor="middle")
    for i, line in enumerate(lines):
        text(x + w / 2, y + 35 + 15 * i, line, size=11, anchor="middle", colour="#333333")
    return {"l": x, "r": x + w, "t": y, "b": y + h, "cx": x + w / 2, "cy": y + h / 2}


def arrow(x1, y1, x2, y2, label=None, colour="#333333", dashed=False, label_dx=0, label_dy=-5):
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    out.append(
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="1.6"'
        f'{dash} marker-end="url(#head)"/>'
    )
    if label:
        text((x1 + x2) / 2 + label_dx, (y1 + y2) / 2 + label_dy, label, size=11, anchor="middle",
             colour=colour, style="italic")


def band(y, h, name, rule):
    """A layer: its name and what it may include, in lines, at its top left."""
    out.append(f'<rect x="10" y="{y}" width="{WIDTH - 20}" height="{h}" rx="8" fill="#fafafa" '
               f'stroke="#bbbbbb" stroke-width="1"/>')
    text(24, y + 22, name, size=16, weight="bold")
    for i, line in enumerate(rule):
        text(24, y + 40 + 14 * i, line, size=11, colour="#555555")


def draw():
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}">'
    )
    out.append('<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
               'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
               'fill="#333333"/></marker></defs>')
    out.append(f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>')
    text(WIDTH / 2, 28, "ScaleLab: the layers, and one training step through them", size=18,
         weight="bold", anchor="middle")

    # ui/
    band(44, 118, "ui/", ["Qt Widgets, Charts;", "includes app/, engine/"])
    window = box(200, 60, 190, 84, "gui", "MainWindow", ["main_window.h", "form, menus, status bar"])
    form = box(410, 60, 190, 84, "gui", "ExperimentForm", ["experiment_form.h", "RunSpec from the form"])
    charts = box(620, 60, 220, 84, "gui", "ChartGrid, RunTableView",
                 ["chart_grid.h, run_table_view.h", "redraw at most every 50 ms"])

    # app/
    band(176, 160, "app/", ["Qt Core, SQL;", "includes engine/;", "no Qt Widgets"])
    collection = box(200, 200, 190, 96, "gui", "RunCollection",
                     ["run_collection.h", "the session's runs + curves", "queued signals in"])
    controller = box(410, 200, 190, 96, "controller", "RunController",
                     ["run_controller.h", "load_dataset, Trainer::run", "one run at a time"])
    recorder = box(620, 200, 180, 96, "writer", "RunRecorder",
                   ["run_recorder.h", "commits at least", "once a second"])
    store = box(820, 200, 140, 96, "none", "RunStore", ["run_store.h", "one SQLite file", "(WAL)"])
    cli = box(980, 200, 120, 96, "controller", "scalelab-cli", ["app/cli/", "train_command", "main()"])

    # engine/
    band(350, 370, "engine/", ["plain C++20;", "no Qt header"])
    trainer = box(200, 376, 200, 70, "controller", "Trainer::run",
                  ["train/trainer.cpp", "starts DeviceThreads, joins"])
    loader = box(20, 486, 150, 84, "loader", "BatchLoader",
                 ["data/batch_loader.h", "gather, augment,", "normalise; 2 ahead"])
    worker = box(230, 486, 180, 84, "device", "DeviceWorker",
                 ["train/device_worker.cpp", "train_step: micro-batches,", "totals, noise scale"])
    replica = box(470, 486, 180, 84, "device", "Replica",
                  ["train/replica.cpp", "forward, backward,", "result, update"])
    layers = box(720, 486, 180, 84, "device", "nn::Model, layers",
                 ["nn/model.cpp", "Backend kernels:", "cpu/ (oneDNN), cuda/"])
    reducer = box(470, 616, 180, 84, "comm", "GradientReducer",
                  ["train/gradient_reducer.cpp", "buckets, in order,", "overlapping backward"])
    comm = box(720, 616, 180, 84, "comm", "Communicator",
               ["comm/communicator.h", "ThreadComm (CPU)", "NcclCommunicator (GPU)"])
    optim = box(230, 616, 180, 84, "device", "Optimizer::step",
                ["optim/, cuda fused_*.cu", "p <- f(p, g, lr)", "lr from LrSchedule"])
    sink = box(20, 616, 150, 84, "device", "MetricsSink",
               ["train/metrics.h", "rank 0: on_step,", "on_epoch"])
    module = box(940, 486, 160, 84, "none", "libscalelab_cuda.so",
                 ["loaded on first GPU use", "cuda/gpu_module.cpp", "cuDNN, cuBLAS, NCCL"], dashed=True)

    # The step, numbered as docs/architecture.md tells it.
    arrow(window["cx"], window["b"], collection["cx"], collection["t"], "1 Start")
    arrow(form["l"], form["cy"], window["r"], form["cy"])
    arrow(collection["r"], collection["cy"], controller["l"], controller["cy"])
    arrow(controller["cx"] - 60, controller["b"], trainer["cx"] + 60, trainer["t"], "2")
    arrow(cli["cx"], cli["b"], trainer["r"] - 10, trainer["t"] + 10, "or", label_dy=-8)
    arrow(trainer["cx"] - 50, trainer["b"], worker["cx"], worker["t"], "3 run_device")
    arrow(loader["r"], loader["cy"], worker["l"], worker["cy"], "4 next()", label_dy=-8)
    arrow(worker["r"], worker["cy"], replica["l"], replica["cy"], "5", label_dy=-8)
    arrow(replica["r"], replica["cy"] - 15, layers["l"], layers["cy"] - 15, "forward")
    arrow(layers["l"], layers["cy"] + 15, replica["r"], layers["cy"] + 15, "backward", label_dy=14)
    arrow(layers["r"], layers["cy"], module["l"], module["cy"], None, colour="#888888", dashed=True)
    arrow(layers["cx"] - 50, layers["b"], reducer["r"] - 10, reducer["t"],
          "6 gradients_written", label_dx=30)
    arrow(reducer["r"], reducer["cy"], comm["l"], reducer["cy"], "7", label_dy=-8)
    arrow(reducer["l"], reducer["cy"], optim["r"], reducer["cy"], "8", label_dy=-8)
    arrow(optim["l"], optim["cy"], sink["r"], optim["cy"], "9", label_dy=-8)
    # From rank 0's sink up to the app: the signals to the GUI, the rows to the recorder.
    up = 190  # between the loader and the worker, left of the trainer
    out.append(f'<polyline points="{sink["r"]},{sink["cy"] - 20} {up},{sink["cy"] - 20} {up},310 '
               f'{recorder["cx"] - 40},310 {recorder["cx"] - 40},{recorder["b"]}" fill="none" '
               f'stroke="#333333" stroke-width="1.6" marker-end="url(#head)"/>')
    text(up + 8, 326, "10 signals (queued), rows", size=11, style="italic")
    arrow(collection["cx"] - 40, 310, collection["cx"] - 40, collection["b"], None)
    arrow(recorder["r"], recorder["cy"], store["l"], store["cy"])
    arrow(cli["l"], cli["cy"] + 30, store["r"], cli["cy"] + 30)
    arrow(collection["cx"] + 40, collection["t"], charts["cx"] - 60, charts["b"], "redraw")

    # Legend.
    y = 742
    text(24, y, "Each box's colour is the thread that runs it:", size=12, weight="bold")
    for i, (name, stroke, fill) in enumerate(THREADS.values()):
        col, row = i % 2, i // 2
        bx, by = 24 + col * 540, y + 12 + row * 22
        out.append(f'<rect x="{bx}" y="{by}" width="16" height="14" rx="3" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="2"/>')
        text(bx + 24, by + 12, name, size=12)
    out.append("</svg>")


def main():
    target = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else (
        pathlib.Path(__file__).resolve().parent.parent / "docs" / "images" / "architecture.svg")
    draw()
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
