// The shift report page: its Print button opens the browser's print dialog (the page's @media print CSS).
document.getElementById("print-report").addEventListener("click", () => window.print());
