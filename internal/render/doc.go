// Package render turns a Result into text for people, JSON for programs and
// CSV for spreadsheets. Renderers only format: every number they print is
// in the Result.
//
// Design. Each command's file registers its views from an init function:
// RegisterText and RegisterCSV by Result kind, RegisterFormat for an -o
// format (its name and file extensions; package report registers the HTML
// one). Text writes the kind's own layout, then the checks, findings and
// verdict (Judgement), the same for every kind. A view decides nothing:
// what a number means is already in the Result (its checks, findings and
// summary), so a Result read back from JSON renders as it did live. The
// goldens under testdata (real Results of every command, with their text
// and CSV) hold the views.
package render
