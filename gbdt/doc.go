// Package gbdt owns a compact gradient-boosted decision-tree binary
// classifier: the learner behind the lopp policy (SPEC section 2, L-OPP).
//
// No maintained Go library trains gradient-boosted trees, so this package
// writes the few hundred lines the policy needs, following XGBoost's
// "hist" method:
//
//   - logistic loss; each round fits one regression tree to the gradient
//     g = p - y and hessian h = p(1-p) of the current margins;
//   - features are quantised once into at most [Config.MaxBins] bins by
//     quantiles of the training data; the bin edges are kept in the model;
//   - trees grow level by level to [Config.MaxDepth]; a node splits on the
//     (feature, bin) with the largest gain
//     GL²/(HL+λ) + GR²/(HR+λ) - G²/(H+λ) > 0 whose children each have a
//     hessian sum of at least [Config.MinChildWeight];
//   - a leaf's value is the Newton step -G/(H+λ) times the learning rate;
//   - optional row subsampling per round draws from a PCG generator seeded
//     with [Config.Seed].
//
// Determinism: the same rows, labels and [Config] give a byte-identical
// model file on every machine, whatever [Config.Workers] is: work is split
// by (node, feature), and each histogram is summed in row order by a single
// goroutine. Ties between equal gains go to the lower feature, then the
// lower bin.
//
// A [Model] scores a feature vector with [Model.Score] without allocating;
// its trees are held in one flat node array. Models are saved and loaded as
// versioned JSON ([Model.WriteJSON], [ReadJSON]); docs/lopp.md describes the
// file.
//
// gbdt imports nothing from mdk.
package gbdt
