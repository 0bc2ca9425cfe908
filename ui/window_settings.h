#pragma once

class QSettings;

namespace scalelab {

class MainWindow;

// What the window remembers between launches, in QSettings (~/.config/ScaleLab/ScaleLab.conf):
// its size and place, its docks and toolbar, the split between charts and run table, the run
// table's columns and its What differs box, the theme and the experiment in the form. main()
// restores it at start and saves it at quit; tests pass a QSettings of their own.

// Saves the window as it is; the layout of presenter mode (F11) is not kept, only the theme
// and the experiment then.
void save_window_settings(MainWindow& window, QSettings& settings);

// Restores what save_window_settings kept. What is missing, or no longer readable (an
// experiment from another version, a damaged file), is left as the window has it. The theme is
// restored unless `keep_theme` (a --theme given on the command line).
void restore_window_settings(MainWindow& window, QSettings& settings, bool keep_theme);

}  // namespace scalelab
