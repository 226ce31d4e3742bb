## Der Chat-Bereich (src/ui/*-view.js). Nachrichten ohne Wert setzen nur Attribute
## (eine Schaltfläche, deren Inhalt ein Symbol und eine eigene Beschriftung ist).

zocrates-sidebar-title = Zocrates
zocrates-sidebar-chats-button =
    .title = Ihre Chats
zocrates-sidebar-new-chat-button =
    .title = Neuen Chat beginnen
zocrates-sidebar-new-chat = Neuer Chat
zocrates-sidebar-settings =
    .title = Zocrates-Einstellungen
    .aria-label = Zocrates-Einstellungen
zocrates-sidebar-collapse =
    .title = Zocrates ausblenden
    .aria-label = Zocrates ausblenden
zocrates-sidebar-send = Fragen
zocrates-sidebar-send-button =
    .title = Fragen ({ $shortcut })
zocrates-sidebar-stop = Stopp
zocrates-sidebar-stop-button =
    .title = Antwort abbrechen
zocrates-sidebar-input =
    .placeholder = Fragen Sie zu Ihren Artikeln…
    .aria-label = Ihre Frage
zocrates-sidebar-hint-ask = { $shortcut } zum Fragen
zocrates-sidebar-hint-replace = { $shortcut } zum Ersetzen · Esc zum Abbrechen
zocrates-sidebar-hint-streaming = Antwort läuft… Esc oder Stopp zum Unterbrechen
zocrates-sidebar-editing = Sie bearbeiten eine frühere Frage: Beim Senden werden sie und alles danach ersetzt.
zocrates-sidebar-cancel = Abbrechen
zocrates-sidebar-steps =
    { $count ->
        [one] { $count } Schritt
       *[other] { $count } Schritte
    }
zocrates-sidebar-edit = Bearbeiten
zocrates-sidebar-edit-button =
    .title = Diese Frage bearbeiten: Sie kommt mit ihrem Bereich zurück ins Eingabefeld; beim Senden werden diese Runde und alles danach ersetzt
zocrates-sidebar-rewind = Zurücksetzen
zocrates-sidebar-rewind-button =
    .title = Diese Runde und alles danach verwerfen; die Frage kommt zurück ins Eingabefeld
zocrates-sidebar-user-scope =
    .title = Worauf sich diese Frage bezog
zocrates-sidebar-copy = Kopieren

## Chat-Liste.

zocrates-sessions-list =
    .aria-label = Ihre Chats
zocrates-sessions-heading = Chats
zocrates-sessions-count =
    { $count ->
        [one] { $count } Chat
       *[other] { $count } Chats
    }
zocrates-sessions-keys = ↑↓ öffnen ↩ · F2 umbenennen · Entf löschen
zocrates-sessions-empty = Noch keine Chats. Stellen Sie eine Frage, um einen zu beginnen.
zocrates-sessions-default-title = Neuer Chat
zocrates-sessions-rename-input =
    .aria-label = Chat-Titel
zocrates-sessions-save = Speichern
zocrates-sessions-confirm-delete = „{ $title }“ samt Verlauf löschen?
zocrates-sessions-delete = Löschen
zocrates-sessions-rename-button =
    .title = Umbenennen (F2)
    .aria-label = Umbenennen
zocrates-sessions-delete-button =
    .title = Löschen (Entf)
    .aria-label = Löschen

## Wann etwas aktualisiert wurde.

zocrates-time-just-now = gerade eben
zocrates-time-minutes = vor { $n } Min.
zocrates-time-hours = vor { $n } Std.
zocrates-time-yesterday = gestern
zocrates-time-days = vor { $n } Tagen

## Hinweise und der leere Bereich.

zocrates-notice-dismiss =
    .title = Schließen
    .aria-label = Schließen
zocrates-action-retry = Erneut versuchen
zocrates-action-settings = Einstellungen öffnen
zocrates-action-show-card = Kontrollpunkt anzeigen
zocrates-action-discard-paused = Angehaltene Runde verwerfen
zocrates-action-reload = Chat neu laden
zocrates-action-new-chat = Neuer Chat
zocrates-empty-offline = Zocrates ist nicht erreichbar
zocrates-empty-connecting = Verbindung zu Zocrates wird hergestellt…
zocrates-empty-heading = Fragen Sie Ihre Bibliothek
zocrates-empty-intro = Antworten zitieren Ihre Artikel und nennen Eintrag und Seite; klicken Sie auf einen Beleg, um das PDF an dieser Stelle zu öffnen. Wählen Sie unten, was durchsucht werden soll: die ausgewählten Artikel, die aktuelle Sammlung oder die ganze Bibliothek.
zocrates-example-findings = Was sind die wichtigsten Ergebnisse der ausgewählten Artikel?
zocrates-example-methods = Welche Methoden verwenden diese Artikel, und wie unterscheiden sie sich?
zocrates-example-limitations = Welche Einschränkungen räumen die Autoren ein?

## Eine Antwort.

zocrates-answer-author = Zocrates
zocrates-answer-status-writing = Schreibt…
zocrates-answer-status-researching = Recherchiert…
zocrates-answer-status-paused = Wartet auf Ihre Entscheidung
zocrates-answer-status-stopped = Gestoppt
zocrates-answer-status-error = Unterbrochen
zocrates-answer-steps-title = Rechercheschritte
zocrates-answer-offline-label = Offline-Modell:
zocrates-answer-offline-text = zitiert Ihre Artikel wörtlich, statt eine Synthese zu schreiben.
zocrates-answer-choose-model = Modell auswählen…
zocrates-answer-open-reader =
    .title = Im Reader öffnen
zocrates-answer-copy-markdown = Als Markdown kopieren
zocrates-answer-copy-markdown-button =
    .title = Die Antwort mit ihren Belegen und Quellen als Markdown kopieren
zocrates-answer-copy-text = Als Text kopieren
zocrates-answer-copy-text-button =
    .title = Die Antwort mit ihren Belegen und Quellen als reinen Text kopieren
zocrates-answer-copied = Kopiert
zocrates-answer-save-note = Als Notiz speichern
zocrates-answer-save-note-button =
    .title = Diese Antwort als Zotero-Notiz behalten (als Unternotiz des Artikels, den sie am häufigsten zitiert), mit Links, die die belegten Seiten öffnen
zocrates-answer-saved-note = Als Notiz gespeichert
zocrates-answer-save-failed = Die Notiz konnte nicht gespeichert werden: { $message }
# Eine als Notiz gespeicherte oder kopierte Antwort: die Überschrift ihrer Quellenliste und was über
# ein Zitat gesagt wird, das auf einer anderen als der belegten Seite oder gar nicht gefunden wurde.
zocrates-note-sources = Quellen
zocrates-note-quote-on-page = das Zitat steht auf S. { $page }
zocrates-note-quote-not-found = das Zitat wurde auf der belegten Seite nicht gefunden
# Der Tooltip eines Belegs; die letzten beiden kennzeichnen einen Beleg, dessen Zitat nicht auf der
# belegten Seite steht ($cited ist eine der ersten beiden).
zocrates-citation-title = { $title }
zocrates-citation-title-page = { $title }, S. { $page }
zocrates-citation-quote-elsewhere = { $cited } (das Zitat steht auf S. { $page })
zocrates-citation-quote-missing = { $cited } (das Zitat wurde auf dieser Seite nicht gefunden)
zocrates-citation-title-note = Ihre Notiz in { $title }
zocrates-citation-title-highlight = Ihre Hervorhebung in { $title }, S. { $page }
zocrates-citation-title-comment = Ihr Kommentar in { $title }, S. { $page }
# Die Runde eines entfernten Modells: Tokens ein und aus, und was sie kosten, wenn der Preis des Modells bekannt ist.
zocrates-answer-usage = { NUMBER($input) } Tokens ein · { NUMBER($output) } aus
zocrates-answer-usage-cost = { NUMBER($input) } Tokens ein · { NUMBER($output) } aus · ≈ ${ $cost }
zocrates-answer-usage-line =
    .title = Tokens, die diese Runde mit { $model } verbraucht hat

## Rechercheschritte in einer Sprechblase.

zocrates-steps-headline-searches =
    { $count ->
        [one] { $count } Suche
       *[other] { $count } Suchen
    }
zocrates-steps-headline-readings =
    { $count ->
        [one] { $count } Lesevorgang
       *[other] { $count } Lesevorgänge
    }
zocrates-steps-headline-thoughts =
    { $count ->
        [one] { $count } Gedanke
       *[other] { $count } Gedanken
    }
zocrates-steps-headline-extensions =
    { $count ->
        [one] { $count } Erweiterung
       *[other] { $count } Erweiterungen
    }
zocrates-live-writing = Schreibt die Antwort…
zocrates-live-searching-further = Sucht weiter…
zocrates-live-preparing = Bereitet die Antwort vor…
zocrates-live-ranking = Gewichtet die Belege…
zocrates-live-searching = Durchsucht Ihre Bibliothek…
zocrates-live-thinking = Denkt nach…
zocrates-live-starting = Startet…

## Eingabebereich: worauf sich die Frage bezieht.

zocrates-scope-ask-about = Fragen zu
zocrates-scope-mode-items = Ausgewählt
zocrates-scope-mode-items-count = Ausgewählt ({ $count })
zocrates-scope-mode-collection = Sammlung
zocrates-scope-mode-library = Bibliothek
zocrates-scope-why-items = Wählen Sie Artikel in Zotero aus (oder öffnen Sie einen), um danach zu fragen
zocrates-scope-why-collection = Wählen Sie eine Sammlung in Zotero aus, um danach zu fragen
zocrates-scope-detail-collection = { $name }, mit ihren Untersammlungen
zocrates-scope-detail-collections =
    { $count ->
        [one] { $names }, mit ihren Untersammlungen: ein Artikel
       *[other] { $names }, mit ihren Untersammlungen: { $count } Artikel
    }
zocrates-scope-detail-library = Alle indexierten Artikel in Ihrer Bibliothek
zocrates-snippet-unpin =
    .title = Ablösen
    .aria-label = Diese Textstelle ablösen
zocrates-snippet-page = S. { $page }
zocrates-snippet-offer =
    .title = Den im Reader markierten Text anheften: Die Frage konzentriert sich dann darauf
zocrates-snippet-offer-text = Markierten Text anheften: „{ $text }“
zocrates-snippet-offer-text-page = Markierten Text anheften (S. { $page }): „{ $text }“
zocrates-snippet-image-label = Bild
zocrates-snippet-image-wait =
    .title = Das Bild wird zurückgeholt …
zocrates-snippet-image-unpin =
    .title = Ablösen
    .aria-label = Dieses Bild ablösen

## Bereichsauswahl.

zocrates-scope-items =
    { $count ->
        [one] { $title }
       *[other] { $count } Artikel
    }
zocrates-scope-collection = Sammlung: { $name }
zocrates-scope-library = Ganze Bibliothek
zocrates-scope-snippets =
    { $count ->
        [one] { $count } angeheftete Textstelle
       *[other] { $count } angeheftete Textstellen
    }
zocrates-reader-pin = Zocrates hierzu fragen
zocrates-scope-images =
    { $count ->
        [one] { $count } angeheftetes Bild
       *[other] { $count } angeheftete Bilder
    }
zocrates-reader-pin-image = Zocrates zu diesem Bild fragen

## Deep-Research-Kontrollpunktkarte (die IDs entsprechen den ENGLISH-Schlüsseln in src/card.js).

zocrates-card-badge = Deep Research: Erweiterung { $number } von { $max }
zocrates-card-badge-final = Deep Research: keine Erweiterungen mehr übrig
zocrates-card-grant-label = Deep-Research-Erweiterung gewähren (+{ $calls } Aufrufe, +{ $words } Wörter)
zocrates-card-synthesize-label = Antwort aus den vorhandenen Belegen erstellen
zocrates-card-guidance-placeholder = Die Suche lenken (optional), z. B. „auf die Ablationsstudie in Tabelle 3 konzentrieren“
zocrates-card-covered-heading = Was die Suche abgedeckt hat
zocrates-card-gaps-heading = Noch nicht gefunden
zocrates-card-trigger-budget_exhausted = Die Suche hat ihr Budget aufgebraucht, bevor sie fertig war.
zocrates-card-trigger-gaps = Die Suche hat Teile der Frage ohne Belege gelassen.
zocrates-card-trigger-agent_request = Der Suchagent hat um mehr Spielraum gebeten, um fertig zu werden.
zocrates-card-stats = { $evidence } Textstellen mit { $calls } von { $budget } Suchen und { $words } von { $ceiling } Wörtern gefunden.
# Die Karte um diese herum: ihr Titel, die Budgetanzeigen, die abgedeckten Quellen, das
# Feld für Hinweise, was jede Wahl kostet und die Schaltfläche zum Verwerfen.
zocrates-card-title = Die Suche hat vor der Antwort angehalten
zocrates-card-choose-prompt = Wählen Sie, wie es weitergehen soll.
zocrates-card-meter-searches = Suchen
zocrates-card-meter-words = Gelesene Wörter
zocrates-card-meter-value = { $used } von { $of }
zocrates-card-passages-found = Gefundene Textstellen
zocrates-card-meter-count = { $count }
zocrates-card-from-papers =
    { $count ->
        [one] aus { $count } Artikel
       *[other] aus { $count } Artikeln
    }
zocrates-card-open-page = S. { $page } im Reader öffnen
zocrates-card-open = Im Reader öffnen
zocrates-card-page = S. { $page }
zocrates-card-nothing-found = Bisher wurde nichts Relevantes gefunden.
zocrates-card-guidance-label = Hinweise für den nächsten Durchgang
zocrates-card-guidance-optional = (optional)
zocrates-card-guidance-kept = Die Hinweise werden mit Ihrer Wahl gespeichert.
zocrates-card-guidance-shortcut = { $shortcut } gewährt die Erweiterung mit diesen Hinweisen.
zocrates-card-discard = Diese Runde verwerfen
zocrates-card-discard-title = Diese Frage und ihre Suche aus dem Chat entfernen; die Frage kommt zurück in das Feld unten
# Die Zeile unter der Schaltfläche zum Gewähren: cost-grant oder cost-grant-chunks, dann
# cost-last-extension oder cost-more-extensions.
zocrates-card-cost-grant = Ein weiterer Suchdurchgang, gelenkt durch Ihre Hinweise, dann die Antwort.
zocrates-card-cost-grant-chunks =
    { $chunks ->
        [one] Ein weiterer Suchdurchgang, gelenkt durch Ihre Hinweise, dann die Antwort aus bis zu { $chunks } Textstelle.
       *[other] Ein weiterer Suchdurchgang, gelenkt durch Ihre Hinweise, dann die Antwort aus bis zu { $chunks } Textstellen.
    }
zocrates-card-cost-last-extension = Dies ist die letzte Erweiterung.
zocrates-card-cost-more-extensions =
    { $count ->
        [one] Danach ist noch { $count } weitere Erweiterung möglich.
       *[other] Danach sind noch { $count } weitere Erweiterungen möglich.
    }
zocrates-card-cost-none-left = Für diese Frage sind keine Erweiterungen mehr übrig.
zocrates-card-cost-synthesize =
    { $count ->
        [one] Keine weitere Suche: Die Antwort entsteht jetzt aus der { $count } bisher gefundenen Textstelle.
       *[other] Keine weitere Suche: Die Antwort entsteht jetzt aus den { $count } bisher gefundenen Textstellen.
    }

## Ein Rechercheschritt in den Schritten einer Antwort ($query und $text sind auf eine Zeile gekürzt).

zocrates-step-research = Die Bibliothek durchsuchen
zocrates-step-searched = „{ $query }“ gesucht
zocrates-step-searched-library = Die Bibliothek durchsucht
zocrates-step-passages =
    { $count ->
        [one] { $count } Textstelle
       *[other] { $count } Textstellen
    }
zocrates-step-items-more = { $items } und { $more } weitere
zocrates-step-page = S. { $page }
zocrates-step-pages = S. { $start }–{ $end }
zocrates-step-read = { $where } gelesen
zocrates-step-read-paper = Einen Artikel gelesen
zocrates-step-toc = Das Inhaltsverzeichnis angesehen
zocrates-step-conclude = Die Suche abgeschlossen
zocrates-step-extend = Um mehr Raum für die Suche gebeten
zocrates-step-openalex = In OpenAlex nach „{ $query }“ gesucht
zocrates-step-openalex-any = In OpenAlex gesucht
zocrates-step-works =
    { $count ->
        [one] { $count } Werk
       *[other] { $count } Werke
    }
zocrates-step-failed = { $tool } fehlgeschlagen
zocrates-step-thought = Gedanke
zocrates-step-note = Notiz
zocrates-step-paused = Angehalten für Ihre Entscheidung: Erweiterung { $number } von { $max } angeboten
zocrates-step-paused-final = Angehalten für Ihre Entscheidung: keine Erweiterung mehr übrig
zocrates-step-gaps =
    { $count ->
        [one] { $count } Teil der Frage ohne Belege
       *[other] { $count } Teile der Frage ohne Belege
    }
zocrates-step-granted = Sie haben Erweiterung { $number } gewährt
zocrates-step-granted-any = Sie haben eine Erweiterung gewährt
zocrates-step-synthesize = Sie haben gewählt, mit den gefundenen Belegen zu antworten
zocrates-step-guidance = Hinweis: „{ $text }“

## Kurze Hinweise des Bereichs.

zocrates-notice-busy-switch = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie den Chat wechseln.
zocrates-notice-busy-new = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie einen neuen Chat beginnen.
zocrates-notice-busy-delete = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie diesen Chat löschen.
zocrates-notice-busy-send = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie eine weitere Frage senden.
zocrates-notice-busy-checkpoint = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie den Kontrollpunkt beantworten.
zocrates-notice-busy-rewind = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie zurücksetzen.
zocrates-notice-busy-edit = Zocrates antwortet noch. Warten Sie, oder klicken Sie auf Stopp, bevor Sie eine Frage bearbeiten.
zocrates-notice-pin-limit = Höchstens { $max } Textstellen können an eine Frage angeheftet werden.
zocrates-notice-pin-image-limit = Höchstens { $max } Bilder können an eine Frage angeheftet werden.
zocrates-notice-image-lost =
    { $count ->
        [one] Ein an diese Frage angeheftetes Bild konnte nicht zurückgeholt werden; heften Sie es im Reader erneut an.
       *[other] { $count } an diese Frage angeheftete Bilder konnten nicht zurückgeholt werden; heften Sie sie im Reader erneut an.
    }
zocrates-notice-image-unreadable = Zotero konnte das Bild dieser Anmerkung nicht liefern ({ $reason }). Scrollen Sie im Reader zu ihr, damit Zotero sie zeichnet, und heften Sie sie dann erneut an.
zocrates-notice-image-too-large = Dieses Bild ist auch verkleinert { $size } groß; Zocrates nimmt Bilder bis { $max }. Zeichnen Sie eine kleinere Bildanmerkung.
zocrates-notice-rewind-unsaved = Diese Frage ist noch nicht gespeichert, es gibt also nichts zurückzusetzen.
zocrates-notice-rewound = Zurückgesetzt: Die Frage steht wieder im Feld unten, mit dem Bereich und den Textstellen, mit denen sie gestellt wurde.
zocrates-notice-edit-unsaved = Diese Frage ist noch nicht gespeichert und kann daher nicht bearbeitet werden.
zocrates-notice-discarded = Die angehaltene Runde wurde verworfen. Ihre neue Frage kann gesendet werden.
zocrates-notice-question-too-long = Die Frage hat { $length } Zeichen; höchstens { $max } sind möglich.
zocrates-notice-guidance-too-long = Die Hinweise haben { $length } Zeichen; höchstens { $max } sind möglich.
zocrates-answer-save-read-only = Die Bibliothek „{ $library }“ ist schreibgeschützt: Die Notiz kann dort nicht gespeichert werden.
zocrates-reader-pin-button =
    .title = Diese Textstelle an Ihre nächste Frage im Zocrates-Bereich anheften
