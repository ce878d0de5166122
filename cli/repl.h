#pragma once
// `thn repl [--interpret]` (and plain `thn`): the interactive shell. Inputs
// run as more of one __main__; an expression's value is echoed; a block
// ends at a blank line; errors are reported and the session goes on. With
// stdin not a terminal it prints no prompts, so it can be scripted.
namespace thn {

int repl_command(int argc, char** argv);

}  // namespace thn
