// The density field's deck keys: initial.density (the background) and [[initial.regions]], boxes
// and spheres of other densities applied in deck order (README, "Heat").
#pragma once

namespace gridsim {

class DeckReader;
struct Config;

// Reads initial.density and [[initial.regions]] into `c` (ConfigError naming the entry and key).
void read_density(const DeckReader& r, Config& c);

}  // namespace gridsim
