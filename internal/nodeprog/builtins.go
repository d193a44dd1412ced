package nodeprog

func builtinPrograms() []Program {
	return []Program{
		getNode, readNodeProps, getEdges, countEdges,
		reachability, pathlessReachability, nHopReachability, bfs,
		shortestPath, widestPath,
		clustering, triangleCount, twoNeighborhood,
		traverseProps, discoverPaths,
	}
}
