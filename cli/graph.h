#pragma once
// `thn graph FILE --fn NAME [-o OUT.svg|png|dot]`: runs the script, then
// draws jit function NAME's last execution trace: inputs, fusion regions as
// clusters, library and view ops, write-backs into inputs and alias edges.
// Rendered by Graphviz's `dot` ($THN_DOT, else PATH's) when it is
// installed; the DOT text beside OUT otherwise (and on stdout without -o).
#include <string>

#include "ir/trace.h"

namespace thn {

std::string trace_dot(const Trace& t, const std::string& title);
int graph_command(int argc, char** argv);

}  // namespace thn
