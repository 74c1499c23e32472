//===- ColouringTest.cpp - Few-colour proper colourings --------------------===//

#include "IPU/Exchange/Colouring.h"

#include <gtest/gtest.h>

#include <random>

using namespace ipu;

namespace {

using Graph = std::vector<std::vector<uint32_t>>;

void addEdge(Graph &graph, uint32_t a, uint32_t b) {
  graph[a].push_back(b);
  graph[b].push_back(a);
}

/// Every vertex coloured below `colours`, no edge inside a colour.
void expectProper(const Graph &graph, const GraphColouring &colouring) {
  ASSERT_EQ(colouring.colour.size(), graph.size());
  for (uint32_t v = 0; v < graph.size(); ++v) {
    EXPECT_LT(colouring.colour[v], colouring.colours) << "vertex " << v;
    for (uint32_t u : graph[v])
      EXPECT_NE(colouring.colour[u], colouring.colour[v]) << "edge " << v << "-" << u;
  }
}

TEST(ColouringTest, GraphsWithoutEdgesTakeOneColourOrNone) {
  GraphColouring none = colourGraph({}, 100);
  EXPECT_EQ(none.colours, 0u);
  EXPECT_TRUE(none.colour.empty());
  Graph isolated(5);
  GraphColouring one = colourGraph(isolated, 100);
  expectProper(isolated, one);
  EXPECT_EQ(one.colours, 1u);
}

TEST(ColouringTest, CrownGraphThatFoolsGreedyTakesTwoColours) {
  // u_i = 2i and v_i = 2i + 1, u_i adjacent to every v_j but v_i: greedy in
  // index order (every degree is equal) gives each pair its own colour; the
  // graph is bipartite, and the tabu search finds the two colours.
  const uint32_t pairs = 16;
  Graph crown(2 * pairs);
  for (uint32_t i = 0; i < pairs; ++i)
    for (uint32_t j = 0; j < pairs; ++j)
      if (i != j)
        addEdge(crown, 2 * i, 2 * j + 1);
  GraphColouring colouring = colourGraph(crown, 10'000);
  expectProper(crown, colouring);
  EXPECT_EQ(colouring.colours, 2u);
}

TEST(ColouringTest, PlantedColouringsAreFoundAndEveryColouringIsProper) {
  // Random graphs whose vertices fall into k classes with edges only between
  // classes (half of those present): k colours suffice, and a clique of one
  // vertex per class (planted too) means no fewer will do.
  for (uint32_t seed = 0; seed < 8; ++seed) {
    std::mt19937 rng(seed);
    const uint32_t k = 4 + seed % 3, n = 120;
    std::vector<uint32_t> planted(n);
    for (uint32_t v = 0; v < n; ++v)
      planted[v] = v < k ? v : rng() % k;
    Graph graph(n);
    for (uint32_t a = 0; a < n; ++a)
      for (uint32_t b = a + 1; b < n; ++b)
        if (planted[a] != planted[b] && ((a < k && b < k) || rng() % 2))
          addEdge(graph, a, b);
    GraphColouring colouring = colourGraph(graph, 50'000);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expectProper(graph, colouring);
    EXPECT_EQ(colouring.colours, k);
    // The same graph, the same colouring.
    EXPECT_EQ(colourGraph(graph, 50'000).colour, colouring.colour);
  }
}

TEST(ColouringTest, ABoundedSearchStillGivesAProperColouring) {
  // With no moves to spend, the greedy colouring stands.
  std::mt19937 rng(3);
  const uint32_t n = 300;
  Graph graph(n);
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b)
      if (rng() % 10 == 0)
        addEdge(graph, a, b);
  GraphColouring greedy = colourGraph(graph, 0);
  expectProper(graph, greedy);
  GraphColouring searched = colourGraph(graph, 20'000);
  expectProper(graph, searched);
  EXPECT_LE(searched.colours, greedy.colours);
}

} // namespace
