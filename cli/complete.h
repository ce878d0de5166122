#pragma once
// Tab completion for the REPL, from the live session: names of __main__ and
// the builtins, attributes after `obj.` (tensor methods, module members),
// keyword arguments inside a call (`name=`), module names after `import`,
// and the REPL's `:commands` with their arguments.
#include <string>
#include <string_view>
#include <vector>

namespace thn {

class Interpreter;

struct Completion {
  size_t start = 0;                     // where the completed word begins in the line
  std::vector<std::string> candidates;  // whole words replacing line[start:], sorted, unique
};

// Completes the word that ends at the end of `line` (the text left of the cursor).
Completion complete(Interpreter& in, std::string_view line);

}  // namespace thn
